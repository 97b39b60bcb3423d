/** Copies a text to the clipboard and says so. */
import { useEffect, useState } from "react";

export function CopyButton({ text, label }: { text: string; label: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");

  useEffect(() => {
    if (state === "idle") return undefined;
    const timer = window.setTimeout(() => setState("idle"), 2000);
    return () => window.clearTimeout(timer);
  }, [state]);

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState("copied");
    } catch {
      // Clipboard access needs a secure context; the text stays selectable in the box.
      setState("failed");
    }
  };

  return (
    <button type="button" className="small" aria-label={label} onClick={copy}>
      {state === "copied" ? "Copied" : state === "failed" ? "Copy failed: select the text" : "Copy"}
    </button>
  );
}

/** Unknown paths inside the app. */
import { Link } from "react-router";

export function NotFound() {
  return (
    <div className="state state-empty">
      <strong>Page not found.</strong>
      <p>
        Back to the <Link to="/">fleet</Link>.
      </p>
    </div>
  );
}

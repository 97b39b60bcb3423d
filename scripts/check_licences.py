"""Check that every Python and npm dependency is under a licence compatible with Apache-2.0.

Run with the project's virtualenv (`make check-licences`): it reads the metadata of every
distribution installed in .venv and the package.json of every package under frontend/ and e2e/
node_modules, so it checks what is actually installed, development tools included.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tomllib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import distributions
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
NPM_PROJECTS = ("frontend", "e2e")
PYTHON_PROJECTS = (".", "backend", "agent")
PROJECT_LICENCE = "Apache-2.0"
OWN_PACKAGES = frozenset(
    {
        "nginx-fleet",
        "nginx-fleet-agent",
        "nginx-fleet-workspace",
        "nginx-fleet-ui",
        "nginx-fleet-e2e",
    }
)

# Permissive licences (and MPL-2.0, whose file-level copyleft binds only changes to the MPL files
# themselves): code under them may be used by an Apache-2.0 project without changing its licence.
COMPATIBLE = frozenset(
    {
        "0BSD",
        "Apache-2.0",
        "BlueOak-1.0.0",
        # Old metadata saying only "BSD": 2- or 3-clause, both compatible.
        "BSD",
        "BSD-2-Clause",
        "BSD-3-Clause",
        "CC0-1.0",
        "ISC",
        "MIT",
        "MIT-0",
        "MPL-2.0",
        "PSF-2.0",
        "Python-2.0",
        "Unlicense",
        "Zlib",
    }
)

# Outside the list above, each accepted for one package with the reason; keyed by the licence
# too, so that a package changing its licence is checked again.
ACCEPTED: dict[tuple[str, str], str] = {
    ("psycopg", "LGPL-3.0-only"): (
        "PostgreSQL driver, imported unmodified as a separate package; the LGPL binds changes "
        "to psycopg itself, not the code that uses it"
    ),
    ("psycopg-binary", "LGPL-3.0-only"): (
        "psycopg's prebuilt C extension, installed unmodified as its own wheel (same terms)"
    ),
    ("caniuse-lite", "CC-BY-4.0"): (
        "browser-support data read at build time by browserslist; attribution-only, not copyleft"
    ),
}

# Free-text licence fields and trove classifiers of older packages, as SPDX identifiers.
ALIASES = {
    "apache 2.0": "Apache-2.0",
    "apache license 2.0": "Apache-2.0",
    "apache software license": "Apache-2.0",
    "bsd": "BSD",
    "bsd license": "BSD",
    "new bsd": "BSD-3-Clause",
    "isc license (iscl)": "ISC",
    "mit license": "MIT",
    "mozilla public license 2.0 (mpl 2.0)": "MPL-2.0",
    "python software foundation license": "PSF-2.0",
    "the unlicense (unlicense)": "Unlicense",
}
NOT_A_LICENCE = frozenset({"dfsg approved"})

_TOKEN = re.compile(r"\(|\)|[^\s()]+")


@dataclass(frozen=True)
class Package:
    """One installed dependency and its declared licence (an SPDX expression, or '')."""

    ecosystem: str
    name: str
    version: str
    licence: str


def normalise(text: str) -> str:
    """An SPDX identifier for a free-text licence name, or the text unchanged."""
    return ALIASES.get(text.strip().lower(), text.strip())


def is_compatible(expression: str) -> bool:
    """Whether an SPDX expression allows use under Apache-2.0 (OR: one side; AND: both)."""
    tokens = _TOKEN.findall(expression)
    if not tokens:
        return False
    position = 0

    def peek() -> str | None:
        return tokens[position] if position < len(tokens) else None

    def take() -> str:
        nonlocal position
        position += 1
        return tokens[position - 1]

    def term() -> bool:
        word = take()
        if word == "(":
            value = either()
            if take() != ")":
                raise ValueError(expression)
            return value
        if peek() == "WITH":  # an exception only ever adds permissions
            take()
            take()
        return normalise(word) in COMPATIBLE

    def both() -> bool:
        value = term()
        while peek() == "AND":
            take()
            value = term() and value
        return value

    def either() -> bool:
        value = both()
        while peek() == "OR":
            take()
            value = both() or value
        return value

    try:
        value = either()
    except (IndexError, ValueError):
        return False
    return value and position == len(tokens)


def python_licence(metadata_expression: str | None, field: str, classifiers: list[str]) -> str:
    """The licence a distribution declares: License-Expression, else License, else classifiers."""
    if metadata_expression:
        return metadata_expression.strip()
    if field and "\n" not in field.strip() and is_compatible(normalise(field)):
        return normalise(field)
    names = [
        normalise(c.rsplit("::", 1)[1])
        for c in classifiers
        if c.startswith("License ::") and c.rsplit("::", 1)[1].strip().lower() not in NOT_A_LICENCE
    ]
    if names:
        # Several classifiers may mean "all of these" (bundled code): require every one.
        return " AND ".join(dict.fromkeys(names))
    return normalise(field) if field and "\n" not in field.strip() else ""


def python_packages() -> Iterator[Package]:
    """Every distribution installed in the running interpreter's environment."""
    for dist in distributions():
        meta = dist.metadata
        yield Package(
            ecosystem="python",
            name=meta["Name"].lower().replace("_", "-"),
            version=meta["Version"],
            licence=python_licence(
                meta.get("License-Expression"),
                meta.get("License") or "",
                meta.get_all("Classifier") or [],
            ),
        )


def npm_licence(manifest: dict[str, object]) -> str:
    """The licence of a package.json: `license`, or the old `licenses` list (either of them)."""
    declared = manifest.get("license")
    if isinstance(declared, dict):
        declared = declared.get("type")
    if isinstance(declared, str):
        return declared.strip()
    listed = manifest.get("licenses")
    if isinstance(listed, list):
        names = [item.get("type") if isinstance(item, dict) else item for item in listed]
        return " OR ".join(str(name) for name in names if name)
    return ""


def npm_packages(project: Path) -> Iterator[Package]:
    """Every package installed under project/node_modules, nested copies included."""
    yield from _npm_tree(project / "node_modules")


def _npm_tree(node_modules: Path) -> Iterator[Package]:
    if not node_modules.is_dir():
        return
    for entry in sorted(node_modules.iterdir()):
        if entry.name.startswith("."):
            continue
        folders = sorted(entry.iterdir()) if entry.name.startswith("@") else [entry]
        for folder in folders:
            manifest_path = folder / "package.json"
            if not manifest_path.is_file():
                continue
            manifest = json.loads(manifest_path.read_text())
            yield Package(
                ecosystem="npm",
                name=str(manifest.get("name", folder.name)),
                version=str(manifest.get("version", "?")),
                licence=npm_licence(manifest),
            )
            yield from _npm_tree(folder / "node_modules")


def own_packages(root: Path) -> Iterator[Package]:
    """This project's own manifests (pyproject.toml, package.json), as they declare themselves."""
    for folder in PYTHON_PROJECTS:
        project = tomllib.loads((root / folder / "pyproject.toml").read_text())["project"]
        licence = project.get("license", "")
        yield Package(
            ecosystem="project",
            name=project["name"],
            version=project["version"],
            licence=licence if isinstance(licence, str) else "",
        )
    for folder in NPM_PROJECTS:
        manifest = json.loads((root / folder / "package.json").read_text())
        yield Package("project", manifest["name"], manifest["version"], npm_licence(manifest))


def problems(packages: list[Package]) -> list[str]:
    """What is wrong: own packages not Apache-2.0, dependencies not compatible nor accepted."""
    found = []
    for package in packages:
        label = f"{package.ecosystem} {package.name} {package.version}: {package.licence or '?'}"
        if package.name in OWN_PACKAGES:
            if package.licence != PROJECT_LICENCE:
                found.append(f"{label} (this project's own package must say {PROJECT_LICENCE})")
        elif not is_compatible(package.licence) and (package.name, package.licence) not in ACCEPTED:
            found.append(f"{label} (not known to be compatible with {PROJECT_LICENCE})")
    return found


def main(argv: list[str] | None = None) -> int:
    """Print a summary per licence; exit 1 naming each incompatible or unknown licence."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=REPO_ROOT, help="repository checkout")
    args = parser.parse_args(argv)
    packages = [*own_packages(args.root), *python_packages()]
    for project in NPM_PROJECTS:
        if not (args.root / project / "node_modules").is_dir():
            print(f"{project}/node_modules is missing: run `make install` first", file=sys.stderr)
            return 2
        packages.extend(npm_packages(args.root / project))
    for ecosystem in ("project", "python", "npm"):
        counts = Counter(p.licence or "?" for p in packages if p.ecosystem == ecosystem)
        summary = ", ".join(f"{licence} {n}" for licence, n in counts.most_common())
        print(f"{ecosystem}: {sum(counts.values())} packages: {summary}")
    for (name, licence), reason in sorted(ACCEPTED.items()):
        if any(p.name == name and p.licence == licence for p in packages):
            print(f"accepted: {name} ({licence}): {reason}")
    found = problems(packages)
    for problem in found:
        print(f"licence problem: {problem}", file=sys.stderr)
    if found:
        print("add a compatible replacement, or an ACCEPTED entry with the reason", file=sys.stderr)
        return 1
    print(f"every dependency is compatible with {PROJECT_LICENCE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

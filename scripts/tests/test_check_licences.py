"""The licence check: which expressions pass, and that a copyleft or unknown dependency fails."""

from __future__ import annotations

from pathlib import Path

import pytest
from check_licences import Package, is_compatible, main, problems, python_licence


@pytest.mark.parametrize(
    "expression",
    ["MIT", "Apache-2.0 OR GPL-2.0-only", "MPL-2.0 AND (Apache-2.0 OR MIT)", "(MIT OR CC0-1.0)"],
)
def test_permissive_expressions_pass(expression: str) -> None:
    assert is_compatible(expression)


@pytest.mark.parametrize(
    "expression",
    ["GPL-3.0-only", "AGPL-3.0-or-later", "MIT AND GPL-2.0-only", "", "SEE LICENSE IN x", "(MIT"],
)
def test_copyleft_unknown_and_malformed_expressions_fail(expression: str) -> None:
    assert not is_compatible(expression)


def test_old_metadata_is_read_from_the_licence_field_or_the_classifiers() -> None:
    assert python_licence(None, "MIT License", []) == "MIT"
    bsd_and_apache = [
        "License :: OSI Approved :: BSD License",
        "License :: OSI Approved :: Apache Software License",
    ]
    assert python_licence(None, "Dual License", bsd_and_apache) == "BSD AND Apache-2.0"
    gpl = ["License :: OSI Approved :: GNU General Public License v3 (GPLv3)"]
    assert not is_compatible(python_licence(None, "", gpl))


def test_problems_name_each_bad_package_and_spare_accepted_ones() -> None:
    packages = [
        Package("python", "somelib", "1.0", "GPL-3.0-only"),
        Package("npm", "mystery", "2.0", ""),
        Package("python", "psycopg", "3.2", "LGPL-3.0-only"),
        Package("npm", "left-pad", "1.3", "WTFPL"),
        Package("python", "nginx-fleet", "0.1.0", "MIT"),
        Package("python", "nginx-fleet-agent", "0.1.0", "Apache-2.0"),
    ]
    found = problems(packages)
    assert [line.split(":")[0] for line in found] == [
        "python somelib 1.0",
        "npm mystery 2.0",
        "npm left-pad 1.3",
        "python nginx-fleet 0.1.0",
    ]


def test_this_checkout_declares_apache_2_and_passes() -> None:
    assert main([]) == 0
    licence = (Path(__file__).resolve().parents[2] / "LICENSE").read_text()
    assert "Apache License" in licence and "Version 2.0, January 2004" in licence
    assert "END OF TERMS AND CONDITIONS" in licence


def test_a_manifest_of_this_project_without_the_licence_field_fails(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    for folder in (".", "backend", "agent", "frontend", "e2e"):
        (tmp_path / folder).mkdir(exist_ok=True)
        for name in ("pyproject.toml", "package.json"):
            if (root / folder / name).exists():
                (tmp_path / folder / name).write_text((root / folder / name).read_text())
        if (root / folder / "node_modules").is_dir():
            (tmp_path / folder / "node_modules").symlink_to(root / folder / "node_modules")
    assert main(["--root", str(tmp_path)]) == 0

    agent = tmp_path / "agent" / "pyproject.toml"
    agent.write_text(agent.read_text().replace('license = "Apache-2.0"\n', ""))
    assert main(["--root", str(tmp_path)]) == 1

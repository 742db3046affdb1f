""".github/workflows/gpu-labs.yml and the documented verify_labs.py commands, on CPU.

The workflow's own step scripts run here in bash, as GitHub's runner runs them (`bash -e`), with a
fake `python3.11` and `pip` on PATH: what they do to the runner's files can be checked without a
GPU. The commands the README and verify_labs.py document are parsed by verify_labs.py's own parser.
"""

import json
import os
import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import verify_labs  # scripts/verify_labs.py
from conftest import COURSE, ROOT

WORKFLOW = ROOT / ".github" / "workflows" / "gpu-labs.yml"


def steps() -> list[dict]:
    jobs = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]
    return jobs["verify"]["steps"]


def step(containing: str) -> dict:
    [found] = [s for s in steps() if containing in s.get("run", "")]
    return found


def executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def run_step(script: str, env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess:
    """One `run:` script, as the runner runs it: bash -e, from the checkout."""
    path = tmp_path / "step.sh"
    path.write_text(script, encoding="utf-8")
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-e", str(path)],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_checkout_keeps_no_credentials():
    checkout = next(s for s in steps() if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["persist-credentials"] is False


# ---------------------------------------------------------------- the environment step


# `python3.11 -m venv DIR` makes DIR/bin/python and a pip that logs its calls and, for the lock,
# exits with $FAKE_PIP_RC (an interrupted or failed install).
FAKE_PYTHON = """#!/bin/sh
dir="$3"
mkdir -p "$dir/bin"
printf '#!/bin/sh\\nexit 0\\n' > "$dir/bin/python"
cat > "$dir/bin/pip" <<'EOF'
#!/bin/sh
echo "pip $*" >> "$PIP_LOG"
case "$*" in *requirements-gpu.txt*) exit "${FAKE_PIP_RC:-0}";; esac
EOF
chmod +x "$dir/bin/python" "$dir/bin/pip"
"""


@pytest.fixture
def runner(tmp_path):
    """Runs the environment step on a fake runner: returns (exit status, lock installs so far)."""
    executable(tmp_path / "bin" / "python3.11", FAKE_PYTHON)
    log = tmp_path / "pip.log"
    env = {
        "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}",
        "LABS_HOME": str(tmp_path / "gpu-labs-cache"),
        "GITHUB_ENV": str(tmp_path / "github_env"),
        "PIP_LOG": str(log),
    }
    script = step("requirements-gpu.txt")["run"]

    def run(pip_rc: int) -> tuple[int, int]:
        proc = run_step(script, {**env, "FAKE_PIP_RC": str(pip_rc)}, tmp_path)
        installs = log.read_text().count("-r labs/requirements-gpu.txt") if log.exists() else 0
        return proc.returncode, installs

    return run


def test_a_failed_install_is_redone_by_the_next_run(runner):
    assert runner(pip_rc=1) == (1, 1)  # pip fails (or the job is cancelled): the step fails
    assert runner(pip_rc=0) == (0, 2)  # the next run installs again instead of reusing it
    assert runner(pip_rc=0) == (0, 2)  # a finished install is reused


def test_the_environment_step_exports_the_labs_python(runner, tmp_path):
    assert runner(pip_rc=0) == (0, 1)
    exported = (tmp_path / "github_env").read_text()
    assert re.fullmatch(r"LABS_PY=.*/gpu-labs-cache/venv-[0-9a-f]{16}/bin/python\n", exported)


# ---------------------------------------------------------------- --lab-args as documented


def lab_arguments(argv: list[str]) -> dict[str, list[str]]:
    return verify_labs.lab_arguments(verify_labs.parse_args(argv))


@pytest.mark.parametrize(
    ("lab_args", "expected"),
    [
        ("--dummy", ["--dummy"]),
        ("", []),
        ("--dummy --config tiny", ["--dummy", "--config", "tiny"]),
    ],
)
def test_the_workflows_lab_args_reach_every_lab(tmp_path, lab_args, expected):
    # the step's own command line, through bash, with a Python that records its arguments
    argv_file = tmp_path / "argv.json"
    recorder = (
        f"#!{sys.executable}\nimport json, sys\n"
        f"json.dump(sys.argv[1:], open({str(argv_file)!r}, 'w'))\n"
    )
    python = executable(tmp_path / "python", recorder)
    env = {"LABS_PY": str(python), "LAB_ARGS": lab_args, "RESULTS": str(tmp_path / "results")}
    proc = run_step(step("verify_labs.py")["run"], env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    script, *argv = json.loads(argv_file.read_text())
    assert script == "scripts/verify_labs.py"
    assert lab_arguments(argv) == dict.fromkeys(verify_labs.lab_scripts(), expected)


def documented_commands() -> list[tuple[str, str]]:
    """(where, arguments after verify_labs.py) of every documented command that uses --lab-args."""
    sources = {
        "README.md": (ROOT / "README.md").read_text(encoding="utf-8"),
        "labs/README.md": (ROOT / "labs" / "README.md").read_text(encoding="utf-8"),  # run-book
        "verify_labs.py docstring": verify_labs.__doc__,
    }
    found = []
    for where, text in sources.items():
        for line in text.splitlines():
            if "verify_labs.py" in line and "--lab-args" in line:
                args = line.split("verify_labs.py", 1)[1].split("#")[0].split("`")[0]
                found.append((where, args.replace("[", "").replace("]", "")))
    return found


def test_the_documentation_shows_a_lab_args_command():
    where = {where for where, _ in documented_commands()}
    assert {"labs/README.md", "verify_labs.py docstring"} <= where


@pytest.mark.parametrize(("where", "args"), documented_commands())
def test_every_documented_lab_args_command_parses(where, args):
    labs = lab_arguments(shlex.split(args))
    first = labs["prefill_decode/phases"]
    assert first and first[0].startswith("--"), (where, args)


def test_run_covers_every_lab_script_of_every_lesson_in_reading_order():
    slugs = [lesson.slug for lesson in COURSE.lessons]
    labs = verify_labs.lab_scripts()
    scripts = (ROOT / "labs").glob("*/*.py")
    on_disk = {
        f"{p.parent.name}/{p.stem}"
        for p in scripts
        if p.parent.name in slugs
        and p.name != "claims.py"  # claims.py: the lab's checks
        and p.parent.name not in verify_labs.ENGINE_FREE_LABS  # no vLLM, not in --run
    }
    assert set(labs) == on_disk and len(labs) == len(on_disk)
    assert labs[:2] == ["prefill_decode/phases", "prefill_decode/sweep"]
    order = [lab.split("/")[0] for lab in labs]
    assert order == sorted(order, key=slugs.index)


def test_only_sweep_gets_the_sweep_args():
    labs = lab_arguments(["--run", "--lab-args=--dummy", "--sweep-args=--repeats 5"])
    assert labs["prefill_decode/sweep"] == ["--dummy", "--repeats", "5"]
    assert all(args == ["--dummy"] for lab, args in labs.items() if lab != "prefill_decode/sweep")

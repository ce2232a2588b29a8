"""Runs a command with the signals that end a process at their default
actions (lit's workers ignore SIGINT, and an ignored signal is inherited);
`--ignore=SIG` first leaves SIG ignored instead (a background job's SIGINT)."""
import os
import signal
import sys

args = sys.argv[1:]
ignored = set()
while args and args[0].startswith("--ignore="):
    ignored.add(args.pop(0)[len("--ignore="):])
for name in ("SIGHUP", "SIGINT", "SIGTERM", "SIGALRM", "SIGUSR2"):
    sig = getattr(signal, name)
    signal.signal(sig, signal.SIG_IGN if name[3:] in ignored else signal.SIG_DFL)
os.execvp(args[0], args)

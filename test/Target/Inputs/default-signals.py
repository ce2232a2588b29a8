"""Runs a command with the signals that end a process at their default
actions (lit's workers ignore SIGINT, and an ignored signal is inherited);
`--ignore=SIG` (a name without SIG, or a real-time signal's number) first
leaves SIG ignored instead (a background job's SIGINT),
`--fsize=BYTES` sets the file-size limit (`ulimit -f`). No core files."""
import os
import resource
import signal
import sys

args = sys.argv[1:]
ignored = set()
while args and args[0].startswith("--"):
    flag, _, value = args.pop(0).partition("=")
    if flag == "--ignore":
        ignored.add(value)
    elif flag == "--fsize":
        resource.setrlimit(resource.RLIMIT_FSIZE, (int(value), int(value)))
names = ["SIGHUP", "SIGINT", "SIGQUIT", "SIGTERM", "SIGALRM", "SIGUSR2",
         "SIGPIPE", "SIGVTALRM", "SIGPROF", "SIGXCPU", "SIGXFSZ", "SIGIO",
         "SIGPWR", "SIGSTKFLT"]
sigs = [(name[3:], getattr(signal, name)) for name in names]
sigs += [(str(n), n) for n in range(signal.SIGRTMIN, signal.SIGRTMAX + 1)]
for name, sig in sigs:
    signal.signal(sig, signal.SIG_IGN if name in ignored else signal.SIG_DFL)
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
os.execvp(args[0], args)

"""A tiny interactive program for the pty engine tests: prompt ``> ``, one line in, a coloured answer out."""

import os
import sys
import time

GREEN, RESET = "\x1b[32m", "\x1b[0m"


def say(*chunks: str, pause: float = 0.03) -> None:
    for chunk in chunks:
        sys.stdout.write(chunk)
        sys.stdout.flush()
        time.sleep(pause)


def main() -> int:
    say("\x1b]0;fake repl\x07Welcome to fake-repl\n")
    if "--cpr" in sys.argv:  # asks where its cursor is before anything else, as codex's TUI does, and waits
        import termios
        import tty

        saved = termios.tcgetattr(0)
        tty.setcbreak(0)
        say("\x1b[6n", pause=0)
        reply = b""
        while not reply.endswith(b"R"):
            reply += os.read(0, 1)
        termios.tcsetattr(0, termios.TCSANOW, saved)
        say(f"cursor at {reply[1:].decode()}\n")
    if "--deaf" in sys.argv:  # shows its prompt, then never reads a thing
        say("> ", pause=0)
        time.sleep(60)
        return 0
    while True:
        say("> ", pause=0)
        line = sys.stdin.readline()
        if not line:
            return 0
        line = line.strip()
        if line == "crash":
            say("fatal: something broke\n")
            return 3
        if line == "bye":
            say("goodbye\n")
            return 0
        if line == "silent":
            say("thinking aloud\n", "and never prompting again")
            time.sleep(30)
            return 0
        if line == "flood":  # one visible line that never ends
            while True:
                sys.stdout.write("x" * 4096)
                sys.stdout.flush()
        if line == "redraw":  # a spinner repainting forever: nothing visible, ever
            while True:
                sys.stdout.write("\x1b[2K\x1b[1G" * 256)
                sys.stdout.flush()
        if line.startswith("count "):  # how much of the line arrived, and how it ended
            say(f"received {len(line)} characters, ending with {line[-12:]!r}\n")
            continue
        if line == "daemon":  # leaves behind a helper in a session of its own, then answers
            import subprocess
            pidfile = os.environ["FAKE_REPL_PIDFILE"]
            code = ("import os, sys, time\nif os.fork(): os._exit(0)\n"
                    "open(sys.argv[1] + '.tmp', 'w').write(str(os.getpid()))\n"
                    "os.rename(sys.argv[1] + '.tmp', sys.argv[1])\ntime.sleep(60)\n")
            subprocess.run([sys.executable, "-c", code, pidfile], start_new_session=True, check=True,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            while not os.path.exists(pidfile):
                time.sleep(0.01)
            say("helper started\n")
            continue
        if line == "slow":
            for n in range(200):
                say(f"line {n}\n", pause=0.05)
            continue
        say(f"{GREEN}You said:{RESET} ", line, "\n", "\x1b[1mdone\x1b[0m ", "here.\n")


if __name__ == "__main__":
    sys.exit(main())

"""Key-to-screen latency while three answers stream at 200 chunks/s each, vs no streams.

Run: .venv/bin/python bench/ui_streams.py [--keys N] [--rate CHUNKS_PER_S] [--size WxH]
Target: p95 ≤ 50 ms with the streams running.

A harness app shows three ChatViews side by side (the chat's real widgets and stylesheet) above
the composer. Keys are posted to the app's driver the way ``pilot.press`` does, one every
``KEY_GAP_S`` (a fast typist). The latency of a key is the time from posting it to the first
frame the compositor renders in which the composer holds that key's character: the frame is
produced by the same code that runs in a real terminal (headless mode only skips writing the
bytes to the terminal). The baseline is measured in the same process, on the same app, with
no streams running; the achieved chunk rate of each stream is printed too, because a UI that
cannot keep up would otherwise look fast by quietly streaming less.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import string
import time
from collections.abc import Sequence
from pathlib import Path

from textual import events
from textual.app import App, ComposeResult
from textual.containers import Horizontal

import tunaflow_tui
from tunaflow_tui.views.chat import ListMessageSource, MessageView
from tunaflow_tui.widgets.chat_view import ChatView
from tunaflow_tui.widgets.composer import Composer

KEY_GAP_S = 0.03
TIMEOUT_S = 5.0
ROTATE_AT_CHARS = 8_000  # a long answer; then the next one starts (a new block is mounted)
TOKEN_CHARS = 5  # a chunk is about one token of a real stream
ANSWER = """I looked at `textstats/cli.py` and the tests before changing anything. The command line \
parses its options with **argparse**, and every counter lives in `textstats/counting.py`, so the \
new flag needs one counter and one option. Here is what I changed and why.

## What changed

- `count_words(text)` splits on any run of whitespace, so tabs and newlines count as separators.
- The `--words` option prints the number next to the file name, like `--lines` does.
- Empty input prints `0` instead of raising, which the old code did for `--lines` too.

```python
def count_words(text: str) -> int:
    return len(text.split())
```

The tests cover an empty file, a file with only whitespace, and a Korean sentence \
(한국어 문장도 단어 수를 셉니다) because `str.split` handles Unicode spaces as well. \
All 14 tests pass locally; the run took 0.4 s.

"""
CHUNKS = tuple(ANSWER[i : i + TOKEN_CHARS] for i in range(0, len(ANSWER), TOKEN_CHARS))


def seed(count: int = 6) -> list[MessageView]:
    return [
        MessageView(i, "user" if i % 2 else "assistant", "You" if i % 2 else "Developer · demo",
                    f"Earlier message {i} with some **markdown**\n\n- one\n- two")
        for i in range(1, count + 1)
    ]


class StreamHarness(App[None]):
    """Three chats and a composer, styled like the app."""

    CSS_PATH = str(Path(tunaflow_tui.__file__).parent / "app.tcss")
    CSS = "#chats { height: 1fr; } #chats ChatView { width: 1fr; }"

    def __init__(self) -> None:
        super().__init__()
        self.sources = [ListMessageSource(seed()) for _ in range(3)]
        self.frame_hook: list[object] = []

    def compose(self) -> ComposeResult:
        with Horizontal(id="chats"):
            for index, source in enumerate(self.sources):
                yield ChatView(source, id=f"chat-{index}")
        yield Composer("Architect (bench)", cursor_blink=False, id="composer")

    def on_mount(self) -> None:
        self.query_one(Composer).focus_input()


class FrameWatcher:
    """Wraps ``app._display`` to timestamp the first frame showing the composer at a given length."""

    def __init__(self, app: StreamHarness) -> None:
        self.app = app
        self.input = app.query_one(Composer).input
        self.target_len: int | None = None
        self.waiter: asyncio.Future[float] | None = None
        self.frames = 0
        original = app._display

        def display(screen: object, renderable: object) -> None:
            original(screen, renderable)  # type: ignore[arg-type]
            if renderable is None:
                return
            self.frames += 1
            waiter = self.waiter
            if waiter is not None and not waiter.done() and len(self.input.text) >= (self.target_len or 0):
                waiter.set_result(time.perf_counter())

        app._display = display  # type: ignore[method-assign]

    async def press(self, char: str) -> float:
        """Post one key; seconds until a frame shows it."""
        self.target_len = len(self.input.text) + 1
        self.waiter = asyncio.get_running_loop().create_future()
        event = events.Key(char, char)
        event.set_sender(self.app)
        driver = self.app._driver
        assert driver is not None
        started = time.perf_counter()
        driver.send_message(event)
        shown = await asyncio.wait_for(self.waiter, TIMEOUT_S)
        return shown - started


async def type_keys(watcher: FrameWatcher, count: int) -> list[float]:
    latencies = []
    letters = string.ascii_lowercase
    for index in range(count):
        if index and index % 60 == 0:
            watcher.input.clear()
            await asyncio.sleep(KEY_GAP_S)
        latencies.append(await watcher.press(letters[index % len(letters)]))
        await asyncio.sleep(KEY_GAP_S)
    watcher.input.clear()
    return latencies


async def stream(app: StreamHarness, index: int, rate: float, stop: asyncio.Event, sent: list[int]) -> None:
    """Append chunks to a streaming answer at ``rate`` per second (by the clock, not by sleeps)."""
    chat = app.query_one(f"#chat-{index}", ChatView)
    source = app.sources[index]
    interval = 1.0 / rate
    next_at = time.perf_counter()
    while not stop.is_set():
        view = MessageView(source.next_id(), "assistant", f"Developer · stream {index + 1}", "", "streaming")
        source.append(view)
        block = await chat.start_stream(view)
        written: list[str] = []
        size = 0
        while size < ROTATE_AT_CHARS and not stop.is_set():
            chunk = CHUNKS[sent[index] % len(CHUNKS)]
            await block.append(chunk)
            written.append(chunk)
            size += len(chunk)
            sent[index] += 1
            next_at += interval
            delay = next_at - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            else:
                await asyncio.sleep(0)  # behind schedule: catch up, but let keys through
        done = MessageView(view.id, view.role, view.label, "".join(written), "done")
        source.replace(done)
        await block.finish(done)


def percentile(values: Sequence[float], pct: float) -> float:
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1))))
    return ordered[rank]


def describe(name: str, values: Sequence[float]) -> str:
    ms = [v * 1000 for v in values]
    return (f"{name:<22}{statistics.median(ms):>8.1f}{percentile(ms, 95):>8.1f}{max(ms):>8.1f}"
            f"{len(ms):>6}")


async def main(keys: int, rate: float, size: tuple[int, int], streams: int) -> None:
    app = StreamHarness()
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        watcher = FrameWatcher(app)
        await type_keys(watcher, 10)  # warm up: first-use costs are not what we measure
        baseline = await type_keys(watcher, keys)

        stop = asyncio.Event()
        sent = [0] * streams
        started = time.perf_counter()
        tasks = [asyncio.create_task(stream(app, i, rate, stop, sent)) for i in range(streams)]
        await asyncio.sleep(0.5)  # let the streams reach their pace
        loaded = await type_keys(watcher, keys)
        elapsed = time.perf_counter() - started
        stop.set()
        await asyncio.gather(*tasks)
        frames = watcher.frames

    print(f"{'case':<22}{'p50 ms':>8}{'p95 ms':>8}{'max ms':>8}{'keys':>6}")
    print(describe("no streams", baseline))
    print(describe(f"{streams} streams @ {rate:.0f}/s", loaded))
    ratio = percentile(loaded, 95) / percentile(baseline, 95)
    print(f"p95 with streams / without: {ratio:.2f}x; p95 with streams {percentile(loaded, 95) * 1000:.1f} ms "
          f"(target ≤ 50 ms)")
    rates = ", ".join(f"{count / elapsed:.0f}" for count in sent)
    print(f"achieved chunks/s per stream: {rates} (asked {rate:.0f}); {frames} frames rendered in total")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=150)
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("--size", default="160x48")
    parser.add_argument("--streams", type=int, choices=(1, 2, 3), default=3)
    args = parser.parse_args()
    width, height = (int(part) for part in args.size.lower().split("x"))
    asyncio.run(main(args.keys, args.rate, (width, height), args.streams))

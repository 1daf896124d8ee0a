"""`tunaflow roundtable`: every flag, its errors, the event lines, the brief, the JSON document, exit codes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from typing import Any

import pytest
from runtime_harness import Harness
from waiting import until_sync

from tunaflow_tui.cli import main
from tunaflow_tui.core.storage import Store

CONSENSUS = ("The seats agree on splitting later.\n\n<!-- tunaflow:consensus -->\nconsensus:\n- Split after the "
             "migrations\ndissent:\n- bob: split now\n<!-- /tunaflow:consensus -->\n")
HOSTILE = "Split now.\x1b]0;owned\x07\x1b[2J It is cheap.\x9b31m"


def _configure(h: Harness, **script: list[dict[str, Any]]) -> None:
    h.set_script(**script)
    h.write_config(f'\n[engines.gone]\ntype = "gemini"\ncommand = "{h.root / "no-such-gemini"}"\n')


def _run(h: Harness, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["roundtable", str(h.project), *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def _branches(h: Harness) -> int:
    if not (h.project / ".tunaflow" / "state.db").exists():
        return 0
    with Store.open(h.project) as store:
        return len(store.list_branches())


def test_a_roundtable_prints_one_line_per_event_and_the_brief(harness: Harness,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    _configure(harness, **{"seat:alice": [{"text": HOSTILE}], "seat:bob": [{"text": "As alice said, fine."}],
                           "seat:sam": [{"text": CONSENSUS}]})
    code, out, err = _run(harness, capsys, "--topic", "Split the storage layer?", "--seat", "alice=fclaude",
                          "--seat", "bob=fcodex:critic", "--seat", "sam=fclaude:synthesizer")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "Roundtable 1 (branch:1) on: Split the storage layer?"
    assert lines[1] == "Round 1 (sequential): alice, bob, sam"
    assert lines[2].startswith("  alice (fclaude) is answering — ") and lines[2].endswith(" tokens of context")
    assert lines[3] == "  alice answered (120 in / 40 out tokens, $0.0012)"
    assert lines[5] == "  bob answered (100 in / 30 out tokens) — responds to alice"
    assert lines[8] == "Round 1 done: 3 answers"
    brief = out.split("Round 1 done: 3 answers\n\n", 1)[1]
    assert brief.startswith("**Roundtable:** Split the storage layer?\n\n## Key Positions\n"
                            "- **alice** (proposer): Split now. It is cheap.\n")
    assert "- Split after the migrations" in brief and "- bob: split now" in brief
    assert "\x1b" not in out and "\x9b" not in out and "\x07" not in out, "agent output is inert"
    with Store.open(harness.project) as store:
        branch = store.list_branches()[0]
        assert (branch.mode, branch.conversation_id) == ("roundtable", "main")
        assert store.list_memos(kind="roundtable_brief", branch_id=branch.id)
    assert main(["branch", str(harness.project), "list"]) == 0
    assert "Split the storage layer?  (roundtable, active, 4 msg" in capsys.readouterr().out


def test_json_gives_seats_rounds_context_tokens_brief_consensus_and_ranking(
        harness: Harness, capsys: pytest.CaptureFixture[str]) -> None:
    _configure(harness, **{"seat:alice": [{"text": "Split now."}, {"text": "Split now, again."},
                                          {"text": "1. A — clearer\n2. B — vaguer"}],
                           "seat:bob": [{"text": "Wait."}, {"text": "Still wait."},
                                        {"text": "1. B — better\n2. A — worse"}],
                           "seat:sam": [{"text": CONSENSUS}, {"text": CONSENSUS}, {"text": "No ranking from me."}]})
    code, out, err = _run(harness, capsys, "--topic", "Split?", "--seat", "alice=fclaude", "--seat",
                          "bob=fcodex:judge:blind", "--seat", "sam=fclaude:lead", "--mode", "deliberative",
                          "--rounds", "2", "--rank", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert (doc["branch_id"], doc["conversation_id"], doc["mode"], doc["ok"]) == (1, "branch:1", "deliberative", True)
    assert [(s["name"], s["engine"], s["role"], s["blind"], s["output_limit"]) for s in doc["seats"]] == [
        ("alice", "fclaude", "proposer", False, 800), ("bob", "fcodex", "judge", True, 500),
        ("sam", "fclaude", "synthesizer", False, 900)]
    assert [r["round"] for r in doc["rounds"]] == [1, 2]
    first, second = doc["rounds"]
    assert [a["seat"] for a in first["answers"]] == ["alice", "bob", "sam"]
    alice = second["answers"][0]
    assert alice["text"] == "Split now, again." and alice["status"] == "done"
    assert alice["context"].startswith("[Output limit: Keep your response under approximately 800 tokens.]")
    assert alice["context_tokens"] > 0 and isinstance(alice["compressed"], bool)
    assert second["compressed"] == alice["compressed"]
    assert "Split now." in alice["context"], "round 2 knows round 1 (excerpts or the full transcript)"
    assert "Split now." not in second["answers"][1]["context"], "the blind seat does not"
    assert first["tokens"]["input"] == 120 + 100 + 120 and first["tokens"]["cost_usd"] == pytest.approx(0.0024)
    assert doc["tokens"]["per_seat"]["bob"]["output"] == 60
    assert doc["brief"].count("**alice**") == 1 and "Split now, again." in doc["brief"]
    assert doc["consensus"]["consensus"] == ["Split after the migrations"]
    ranking = doc["ranking"]
    assert set(ranking["labels"]) == {"alice", "bob", "sam"} and ranking["left_out"] == {
        "sam": "its reply did not rank every answer exactly once"}
    assert sum(item["points"] for item in ranking["scores"]) == 6, "two ballots of two answers: 2 + 1 each"


def test_a_two_seat_ranking_gives_each_seat_the_point_of_the_other_s_vote(
        harness: Harness, capsys: pytest.CaptureFixture[str]) -> None:
    _configure(harness, **{"seat:alice": [{"text": "Split now."}, {"text": "1. A — the only other answer"}],
                           "seat:bob": [{"text": "Wait."}, {"text": "1. A — sound"}]})
    code, out, err = _run(harness, capsys, "--topic", "Split?", "--seat", "alice=fclaude", "--seat", "bob=fcodex",
                          "--rank")
    assert code == 0, err
    assert "Ranking (Borda points): alice 1, bob 1" in out.splitlines()


def test_sigterm_stops_a_roundtable_with_exit_128_plus_the_signal(harness: Harness) -> None:
    started = harness.root / "alice.started"
    _configure(harness, **{"seat:alice": [{"text": "Split now, because", "hang_after_partial": 120,
                                           "started_file": str(started)}]})
    proc = subprocess.Popen([sys.executable, "-m", "tunaflow_tui", "roundtable", str(harness.project), "--topic",
                             "Split?", "--seat", "alice=fclaude"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    try:
        until_sync(lambda: started.exists() and started.read_text().strip() != "", "the seat to start")
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + signal.SIGTERM, out
    assert "tunaflow roundtable: stopped by SIGTERM; the answers given so far are kept in branch:1" in out
    assert "stopped by you" not in out and "Traceback" not in out


def test_a_failing_seat_exits_4_and_keeps_the_others(harness: Harness, capsys: pytest.CaptureFixture[str]) -> None:
    _configure(harness, **{"seat:alice": [{"text": "Split now."}]})
    code, out, _err = _run(harness, capsys, "--topic", "Split?", "--seat", "alice=fclaude", "--seat", "gem=gone")
    assert code == 4
    assert any(line.startswith("  gem failed: ") for line in out.splitlines())
    assert "Round 1 done: 1 answers, 1 failed" in out and "- **alice** (proposer): Split now." in out
    code, out, _err = _run(harness, capsys, "--topic", "Split?", "--seat", "gem=gone", "--json")
    doc = json.loads(out)
    assert code == 4 and doc["ok"] is False
    assert doc["rounds"][0]["answers"][0]["error_kind"] == "binary_missing"


@pytest.mark.parametrize(("args", "message"), [
    (["--seat", "a=fclaude"], "--topic is required"),
    (["--topic", "  ", "--seat", "a=fclaude"], "--topic is required"),
    (["--topic", "t"], "at least one --seat"),
    (["--topic", "t", "--seat", "alice"], "bad seat 'alice': write NAME=ENGINE[:ROLE][:blind]"),
    (["--topic", "t", "--seat", "a b=fclaude"], "may hold only letters"),
    (["--topic", "t", "--seat", "a=fclaude", "--seat", "A=fcodex"], "two seats are called 'A'"),
    (["--topic", "t", "--seat", "a=nope"], "unknown engine 'nope' (configured: "),
    (["--topic", "t", "--seat", "a=fclaude", "--mode", "parallel"], "unknown --mode 'parallel'"),
    (["--topic", "t", "--seat", "a=fclaude", "--rounds", "0"], "--rounds must be a whole number from 1 to 20"),
    (["--topic", "t", "--seat", "a=fclaude", "--rounds", "two"], "--rounds must be a whole number"),
    (["--topic", "t", "--seat", "a=fclaude", "--rounds", "21"], "--rounds must be a whole number"),
    (["--topic", "t", "--seat", "a=fclaude", "--rank"], "ranking needs the answers of at least two seats"),
])
def test_a_bad_argument_is_one_line_and_exit_2(harness: Harness, capsys: pytest.CaptureFixture[str],
                                               args: list[str], message: str) -> None:
    _configure(harness, **{"seat:a": [{"text": "Fine."}]})
    try:
        code, out, err = _run(harness, capsys, *args)
    except SystemExit as exc:  # argparse's own errors
        code, captured = int(exc.code or 0), capsys.readouterr()
        out, err = captured.out, captured.err
    assert code == (1 if "--rank" in args else 2), "a usage error exits 2; a ranking with one answer fails (1)"
    assert err.count("\n") == 1 and err.startswith("tunaflow roundtable: ") and message in err, err
    if "--rank" not in args:
        assert out == "" and _branches(harness) == 0, "nothing was created"


def test_an_unknown_flag_is_refused_before_anything_runs(harness: Harness,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    _configure(harness, **{"seat:a": [{"text": "Fine."}]})
    with pytest.raises(SystemExit) as exc:
        main(["roundtable", str(harness.project), "--topic", "t", "--seat", "a=fclaude", "--loud"])
    err = capsys.readouterr().err
    assert exc.value.code == 2, "a usage error of tunaflow roundtable exits 2"
    assert err == "tunaflow roundtable: unrecognized arguments: --loud\n" and _branches(harness) == 0


def test_other_subcommands_say_an_unknown_flag_in_one_line_too(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["status", ".", "--loud"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err == "tunaflow status: unrecognized arguments: --loud; see tunaflow status --help\n"


def test_a_path_that_is_not_a_directory_is_refused(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["roundtable", str(tmp_path / "nowhere"), "--topic", "t", "--seat", "a=demo"])
    err = capsys.readouterr().err
    assert code == 2 and "is not a directory" in err and not (tmp_path / "nowhere").exists()


def test_one_seat_per_vendor_claude_codex_and_gemini(harness: Harness, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Each adapter answers its seat from its own CLI's stream format (gemini's from a captured run)."""
    from pathlib import Path

    gemini = Path(__file__).resolve().parents[1] / "fakes" / "bin" / "gemini"
    monkeypatch.setenv("FAKE_CLI_SCENARIO", "ok")
    harness.set_script(**{"seat:alice": [{"text": "Split the storage layer now."}],
                          "seat:bob": [{"text": "Wait for the migrations."}]})
    harness.write_config(f'\n[engines.fgemini]\ntype = "gemini"\ncommand = "{gemini}"\n')
    code, out, err = _run(harness, capsys, "--topic", "Split?", "--seat", "alice=fclaude", "--seat",
                          "bob=fcodex:critic", "--seat", "carol=fgemini:judge", "--mode", "deliberative", "--json")
    assert code == 0, err
    doc = json.loads(out)
    answers = {a["seat"]: a for a in doc["rounds"][0]["answers"]}
    assert [(s["name"], s["engine"]) for s in doc["seats"]] == [
        ("alice", "fclaude"), ("bob", "fcodex"), ("carol", "fgemini")]
    assert answers["alice"]["text"] == "Split the storage layer now."
    assert answers["bob"]["text"] == "Wait for the migrations."
    assert answers["carol"]["status"] == "done" and answers["carol"]["text"].startswith("Hello from the")
    assert "**carol** (judge): Hello from the" in doc["brief"]


def test_demo_seats_rank_each_other(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["roundtable", str(tmp_path), "--topic", "Split the store?", "--seat", "a=demo",
                 "--seat", "b=demo:critic", "--rank"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "Ranking (Borda points): a 1, b 1" in out and "left out of the ranking" not in out


def test_a_ranking_nobody_gave_exits_4(harness: Harness, capsys: pytest.CaptureFixture[str]) -> None:
    _configure(harness, **{"seat:a": [{"text": "Fine."}, {"text": "No ranking from me."}],
                           "seat:b": [{"text": "Also fine."}, {"text": "Nor from me."}]})
    code, out, err = _run(harness, capsys, "--topic", "t", "--seat", "a=fclaude", "--seat", "b=fcodex", "--rank")
    assert code == 4, (out, err)
    assert "a was left out of the ranking" in out and "b was left out of the ranking" in out
    assert err == "tunaflow roundtable: no seat ranked the answers; the ranking is empty\n"

"""Secrets are masked on the joined stream: however a reply is split, nothing of a secret shows."""

from __future__ import annotations

import base64
import json
import urllib.parse

from hypothesis import given, settings
from hypothesis import strategies as st

from tunaflow_tui.core.secret_masking import MASK, SecretRegistry, StreamMasker, secret_env_values

SECRET = "s3cr3t-V4lue-xyz"
OTHER = "hunter2-hunter2"
REGISTRY = SecretRegistry.build([SECRET, OTHER])


def streamed(registry: SecretRegistry, pieces: list[str]) -> str:
    masker = StreamMasker(registry)
    return "".join(masker.feed(piece) for piece in pieces) + masker.flush(final=True)


def split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({min(c, len(text)) for c in cuts})
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]


# text made of ordinary words, the secrets, their pieces and encodings, and newlines
_WORDS = st.sampled_from([
    "the ", "key ", "is ", "\n", "s", "s3", "s3cr3t-", SECRET, SECRET[:9], OTHER, OTHER[:6], "hunter", "-",
    base64.b64encode(SECRET.encode()).decode(), urllib.parse.quote(SECRET), "sk-ant-", "sk-ant-api03-" + "a" * 30,
    "ghp_" + "B" * 36, "AKIA" + "Z" * 16, "A", "g", "-----BEGIN RSA PRIVATE KEY-----", "é", "한",
])
_TEXT = st.lists(_WORDS, max_size=30).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=_TEXT, cuts=st.lists(st.integers(min_value=0, max_value=600), max_size=12))
def test_any_split_masks_exactly_as_the_whole_text(text: str, cuts: list[int]) -> None:
    assert streamed(REGISTRY, split(text, cuts)) == REGISTRY.mask(text)


@settings(max_examples=200, deadline=None)
@given(text=_TEXT)
def test_one_character_per_piece_masks_exactly_as_the_whole_text(text: str) -> None:
    out = streamed(REGISTRY, list(text))
    assert out == REGISTRY.mask(text)
    assert SECRET not in out and OTHER not in out


def test_a_secret_at_every_offset_split_at_every_point_never_shows() -> None:
    for offset in range(0, 24):
        text = "x" * offset + f"before {SECRET} after"
        for point in range(len(text) + 1):
            out = streamed(REGISTRY, [text[:point], text[point:]])
            assert out == "x" * offset + f"before {MASK} after", (offset, point)


def test_ordinary_text_is_not_held_back() -> None:
    masker = StreamMasker(REGISTRY)
    assert masker.feed("Hi") == "Hi"
    assert masker.feed(" there, friend.") == " there, friend."
    assert masker.held == 0
    # what could be the start of a secret waits for the next piece, then shows when it is not one
    assert masker.feed(" Use s3c") == " Use "
    assert masker.feed("ret-less word.") == "s3cret-less word."


def test_nested_and_overlapping_secrets_are_masked_whole() -> None:
    inner, outer = "inner-secret-1", "prefix-inner-secret-1-suffix"
    registry = SecretRegistry.build([inner, outer], token_patterns=False)
    assert registry.mask(f"a {outer} b {inner} c") == f"a {MASK} b {MASK} c"
    assert streamed(registry, list(f"a {outer} b")) == f"a {MASK} b"


def test_encoded_forms_are_masked() -> None:
    raw = SECRET.encode()
    for text in (
        f"Authorization: Basic {base64.b64encode(b'user:' + raw).decode()}",
        f"b64 {base64.b64encode(raw).decode()} / {base64.b64encode(b'x' + raw).decode()} / "
        f"{base64.b64encode(b'xy' + raw).decode()}",
        f"https://example.com/?k={urllib.parse.quote(SECRET + '&/', safe='')}",
        json.dumps({"key": SECRET + '"\\'}),
    ):
        out = streamed(REGISTRY, list(text))
        assert out == REGISTRY.mask(text)
        assert SECRET not in out
        for encoded in (base64.b64encode(raw).decode()[:-4], urllib.parse.quote(SECRET, safe="")):
            assert encoded not in out, text


def test_well_known_tokens_are_masked_without_being_registered() -> None:
    registry = SecretRegistry.build([])
    anthropic = "sk-ant-api03-" + "Q" * 80 + "AA"
    github = "ghp_" + "a1B2" * 9
    fine_grained = "github_pat_" + "11ABCDEFG0" * 8
    aws = "AKIAIOSFODNN7EXAMPLE"
    text = f"{anthropic} {github} {fine_grained} {aws}\n-----BEGIN OPENSSH PRIVATE KEY-----\nbody"
    assert streamed(registry, list(text)) == f"{MASK} {MASK} {MASK} {MASK}\n{MASK}\nbody"


def test_a_stream_that_ends_mid_secret_keeps_no_prefix_of_it() -> None:
    for size in range(4, len(SECRET)):
        out = streamed(REGISTRY, list(f"the key is {SECRET[:size]}"))
        assert out == f"the key is {MASK}", size
    # fewer than four characters are too common to hide
    assert streamed(REGISTRY, ["the key is s3c"]) == "the key is s3c"
    # a well-known token cut short
    assert streamed(SecretRegistry.build([]), list("token sk-ant-api03-abc")) == f"token {MASK}"


def test_the_registry_takes_secret_looking_variables_of_eight_characters_or_more() -> None:
    env = {"ANTHROPIC_API_KEY": "sk-ant-0123456789", "GH_TOKEN": "short", "DB_PASSWORD": "pa55word!",
           "HOME": "/home/someone-long", "MULTI_SECRET": "line-one-secret\nline-two-secret\n"}
    assert secret_env_values(env) == ["line-one-secret", "line-two-secret", "pa55word!", "sk-ant-0123456789"]


def test_a_very_long_secret_split_anywhere_is_masked() -> None:
    long_value = "".join(chr(ord("a") + (i * 7) % 26) for i in range(700))  # a long token or key line
    registry = SecretRegistry.build([long_value], token_patterns=False)
    text = f"before {long_value} after"
    for point in range(0, len(text), 37):
        assert streamed(registry, [text[:point], text[point:]]) == f"before {MASK} after", point
    assert streamed(registry, [f"cut {long_value[:350]}"]) == f"cut {MASK}"

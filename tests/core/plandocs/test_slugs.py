"""Plan slugs are short, ASCII, unique and can never name a path outside docs/plans/."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tunaflow_tui.core.plandocs import PlanDocsError, is_valid_slug, make_slug, validate_slug


def free(_: str) -> bool:
    return False


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("Add login page", "add-login-page"),
        ("  Fix: the   CSV export (v2)!  ", "fix-the-csv-export-v2"),
        ("Café crème brûlée", "cafe-creme-brulee"),
        ("Überprüfung der Straße", "uberprufung-der-strae"),
        ("Ａｄｄ ｆｕｌｌ-width", "add-full-width"),
        ("Rocket 🚀 launch", "rocket-launch"),
        ("로그인 페이지 추가 login", "login"),
        ("../../etc/passwd", "etc-passwd"),
        ("/absolute/path\\win", "absolute-path-win"),
        ("nul\x00byte", "nul-byte"),
    ],
)
def test_titles_become_readable_ascii_slugs(title: str, slug: str) -> None:
    assert make_slug(title, plan_id=1, taken=free) == slug


@pytest.mark.parametrize("title", ["로그인 페이지 추가", "🚀🚀🚀", "...", "", "---", "日本語のタイトル"])
def test_titles_without_ascii_words_get_plan_id(title: str) -> None:
    assert make_slug(title, plan_id=42, taken=free) == "plan-42"


def test_long_titles_are_cut_at_a_word_boundary() -> None:
    title = "Implement the brand new authentication flow with refresh tokens and audit logging everywhere"
    slug = make_slug(title, plan_id=1, taken=free)
    assert len(slug) <= 60
    assert slug == "implement-the-brand-new-authentication-flow-with-refresh"
    assert title.lower().replace(" ", "-").startswith(slug)


def test_a_single_enormous_word_is_cut_hard() -> None:
    slug = make_slug("a" * 10_000, plan_id=1, taken=free)
    assert slug == "a" * 60


def test_ten_thousand_character_title_stays_within_limit() -> None:
    slug = make_slug("word " * 2000, plan_id=1, taken=free)
    assert len(slug) <= 60 and not slug.endswith("-") and is_valid_slug(slug)


def test_collisions_get_numbered_suffixes_within_the_limit() -> None:
    existing = {"add-login", "add-login-2"}
    assert make_slug("Add login", plan_id=1, taken=existing.__contains__) == "add-login-3"
    long_title = "x" * 30 + " " + "y" * 29  # exactly 60 characters once joined
    first = make_slug(long_title, plan_id=1, taken=free)
    assert len(first) == 60
    second = make_slug(long_title, plan_id=2, taken={first}.__contains__)
    assert second == "x" * 30 + "-2"
    assert len(second) <= 60


def test_plan_id_slug_also_avoids_collisions() -> None:
    assert make_slug("한국어", plan_id=7, taken={"plan-7"}.__contains__) == "plan-7-2"


def test_slugs_that_read_as_another_plans_documents_are_avoided() -> None:
    # "foo-result" would be the result document of plan "foo"
    assert make_slug("Foo result", plan_id=1, taken=free) == "foo-result-2"
    assert make_slug("Foo task 03", plan_id=1, taken=free) == "foo-task-03-2"
    assert make_slug("Foo review r2", plan_id=1, taken=free) == "foo-review-r2-2"


@pytest.mark.parametrize(
    "bad",
    [".", "..", "../x", "a/b", "a\\b", "a\x00b", "/etc", "Upper", "trailing-", "-lead", "a--b", "a" * 61,
     "café", "", "with space", "foo-result", "foo-task-01"],
)
def test_validate_slug_refuses_rather_than_fixes(bad: str) -> None:
    assert not is_valid_slug(bad)
    with pytest.raises(PlanDocsError):
        validate_slug(bad)


@settings(max_examples=300, deadline=None)
@given(title=st.text(max_size=300), plan_id=st.integers(min_value=1, max_value=10**9))
def test_any_title_gives_a_valid_slug(title: str, plan_id: int) -> None:
    slug = make_slug(title, plan_id=plan_id, taken=free)
    assert validate_slug(slug) == slug
    assert all(c not in slug for c in "/\\\x00.")

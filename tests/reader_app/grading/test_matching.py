"""Normalization and exact matching on real benchmark pairs; fuzzy only ranks."""

from __future__ import annotations

import pytest

from reader_app.grading.key import KeyEntry
from reader_app.grading.matcher import matches_key, rank_suggestions
from reader_app.grading.normalize import normalize_answer

OSTEO = KeyEntry("bone-01", "Osteopoikilosis", ("Osteopathia condensans disseminata",))
PECTUS = KeyEntry("chest-02", "Pectus excavatum", ("Funnel chest",))
LIPOMA = KeyEntry("neuro-03", "Pericallosal lipoma with agenesis of the corpus callosum")
CCF = KeyEntry("vasc-04", "Carotid-cavernous fistula", ("CCF",))


@pytest.mark.parametrize(
    ("answer", "entry"),
    [
        ("Osteopoikilosis", OSTEO),
        ("osteopoikilosis", OSTEO),
        ("  OSTEOPOIKILOSIS. ", OSTEO),
        ("Osteopathia condensans disseminata", OSTEO),
        ("Funnel chest", PECTUS),
        ("The pectus excavatum", PECTUS),
        ("Carotid cavernous fistula", CCF),  # hyphen vs space
        ("carotid–cavernous fistula", CCF),  # en dash
        ("Carotid-cavernous fistula.", CCF),
        ("ccf", CCF),
        ("Ｃａｒｏｔｉｄ-cavernous fistula", CCF),  # full-width letters (NFKC)
    ],
)
def test_exact_match_after_normalization_auto_accepts(answer: str, entry: KeyEntry) -> None:
    assert matches_key(answer, entry)


@pytest.mark.parametrize(
    ("answer", "entry"),
    [
        # one word apart, different entity: never automatic
        ("Pectus carinatum", PECTUS),
        # only the secondary finding of a compound reference
        ("Complete agenesis of corpus callosum", LIPOMA),
        ("Agenesis of the corpus callosum", LIPOMA),
        ("Pericallosal lipoma", LIPOMA),
        # typos and extra specificity are for a human or a judge, not the key
        ("Osteopoikylosis", OSTEO),
        ("Carotid-cavernous fistula with dilated superior ophthalmic vein", CCF),
        ("Osteopoikilosis?", KeyEntry("x", "Osteopathia striata")),
        ("", OSTEO),
        ("   ", OSTEO),
        ("-", OSTEO),
    ],
)
def test_near_misses_are_never_auto_accepted(answer: str, entry: KeyEntry) -> None:
    assert not matches_key(answer, entry)


def test_normalization_rules() -> None:
    assert normalize_answer("Crohn’s disease") == normalize_answer("Crohns disease")
    assert normalize_answer("“Crohn's” disease") == "crohns disease"
    assert normalize_answer("An   aneurysm\t") == "aneurysm"
    assert normalize_answer('"The pneumothorax"') == "pneumothorax"
    assert normalize_answer("Non-ossifying fibroma") == "non ossifying fibroma"
    assert normalize_answer(None) == ""
    # a letter that belongs to the term is not an article
    assert normalize_answer("A-lines") == "a lines" != normalize_answer("lines")
    assert normalize_answer("B-lines") != normalize_answer("A-lines")
    assert normalize_answer("Type A aortic dissection") != normalize_answer(
        "Type B aortic dissection"
    )
    # left and right stay apart
    assert normalize_answer("Left pneumothorax") != normalize_answer("Right pneumothorax")


def test_suggestions_rank_but_the_top_one_still_does_not_match() -> None:
    hints = rank_suggestions("Pectus carinatum", PECTUS, {"pectus carinatum": 0, "funnel": 1})
    assert hints[0].text == "Pectus excavatum" and hints[0].source == "key"
    assert hints[0].similarity > 50
    assert not matches_key("Pectus carinatum", PECTUS)
    # an answer never suggests itself; graded answers carry their verdict
    assert all(h.text != "pectus carinatum" for h in hints)
    graded = [h for h in hints if h.source == "graded"]
    assert graded and graded[0].correct == 1
    assert rank_suggestions("", PECTUS) == ()

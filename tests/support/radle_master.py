"""A 200-case RadLE 2.0 long master in RadLE's real shape, generated for tests.

The columns are those of the public sample (shared/data/radle_long_master_sample.csv).
Humans as RadLE's file has them: ``domain == human``, ``provider`` the reader's
code, ``candidate`` the role (``Radiologist`` / ``Trainee``) shared by several
readers, ``rater_seniority`` one of seven values. Models named by ``candidate``.

Who answers what (cases 1..200 in order, each block after the one before):

- reader k = 1..12 (``R01``..``R12``): correct at L4 on 80 + 5k cases, wrong at L3
  on 30, "I don't know" (four spellings) on 10, wrong at L1 on 10, correct at L2 on
  the remaining 70 - 5k. R01-R03 PGY2, R04-R06 PGY3 (role Trainee); R07 ``post-MD 2y``,
  R08 ``post-MD 5y``, R09 ``post-MD 8y``, R10 ``post-MD 12y``, R11-R12
  ``post-MD 20y`` (role Radiologist): seven seniorities. R01's first answer is marked
  ``abstained``, R02's ``response_valid = False``: RadLE reads neither.
- ``alpha_1`` (OpenAI, closed/general): correct L4 x120, correct L3 x5 with an empty
  diagnosis (RadLE scores them by their verdict), wrong L4 x30, wrong L1 x10,
  failures x10 (5 ``technical_failure`` with an answer, 3 ``PARSE_FAILED`` diagnoses,
  2 ``PARSE_FAILED`` Likerts), "Idon't know" x25.
- ``beta_med`` (Acme Med, open/medical): correct L4 x60, correct L2 x60, wrong L2
  x40, wrong L4 x20, "I dont know" x20.
- ``gamma_muse`` (Meta, open/general): Meta Muse Spark 1.1's published response
  profile: correct 0, 0, 8, 14, 35 at L0-4; wrong 0, 7, 62, 45, 28; one failure.
- ``alpha_0`` (OpenAI, closed/general): the model ``alpha_1`` replaced, its access
  left as it was (RadLE took it off the board by its roster): correct L4 on every case.
- ``gone`` (access excluded): wrong L4 on every case.

A correct answer is ``Dx<case>``, a wrong one ``Other<case>``.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import Final

N_CASES: Final = 200
COLUMNS: Final = (
    "run_id", "Master_Case_ID", "Associated_Images", "model_blinded", "candidate", "provider",
    "access", "domain", "Ground_Truth_Diagnosis", "diagnosis", "likert", "response_valid",
    "abstained", "technical_failure", "score_required", "final_score_authoritative",
    "final_score_source", "weighted_score", "rater_seniority", "rater_seniority_rank",
    "reasoning_text_1", "reasoning_text_2", "reasoning_text_3",
)  # fmt: skip
SENIORITY: Final = {
    **{f"R{k:02d}": "PGY2" for k in (1, 2, 3)},
    **{f"R{k:02d}": "PGY3" for k in (4, 5, 6)},
    "R07": "post-MD 2y",
    "R08": "post-MD 5y",
    "R09": "post-MD 8y",
    "R10": "post-MD 12y",
    "R11": "post-MD 20y",
    "R12": "post-MD 20y",
}
IDK_SPELLINGS: Final = ("I don't know", "Idon't know", "IDK", "i dont know")
# (kind, likert) blocks: c = correct, w = wrong, idk, fail:<how>, blank = correct, no dx
Block = tuple[str, int | None, int]


def reader_blocks(k: int) -> list[Block]:
    return [
        ("c", 4, 80 + 5 * k),
        ("w", 3, 30),
        ("idk", None, 10),
        ("w", 1, 10),
        ("c", 2, 70 - 5 * k),
    ]


MODELS: Final[dict[str, tuple[str, str, str, list[Block]]]] = {
    # name: (provider, access, domain, blocks)
    "alpha_1": ("OpenAI", "closed", "general", [
        ("c", 4, 120), ("blank", 3, 5), ("w", 4, 30), ("w", 1, 10),
        ("fail:technical", 4, 5), ("fail:diagnosis", None, 3), ("fail:likert", None, 2),
        ("idk", None, 25),
    ]),
    "beta_med": ("Acme Med", "open", "medical", [
        ("c", 4, 60), ("c", 2, 60), ("w", 2, 40), ("w", 4, 20), ("idk", None, 20),
    ]),
    "gamma_muse": ("Meta", "open", "general", [
        ("c", 2, 8), ("c", 3, 14), ("c", 4, 35), ("w", 1, 7), ("w", 2, 62), ("w", 3, 45),
        ("w", 4, 28), ("fail:diagnosis", None, 1),
    ]),
    "alpha_0": ("OpenAI", "closed", "general", [("c", 4, N_CASES)]),
    "gone": ("Nobody", "excluded", "excluded", [("w", 4, N_CASES)]),
}  # fmt: skip


def _expand(blocks: list[Block]) -> list[tuple[str, int | None]]:
    out = [(kind, likert) for kind, likert, n in blocks for _ in range(n)]
    assert len(out) == N_CASES, blocks
    return out


def _row(case: int, kind: str, likert: int | None, n_idk: int) -> dict[str, str]:
    """The answer cells of one row: diagnosis, likert, flags, verdict, weighted score."""
    row = {"diagnosis": "", "likert": "", "technical_failure": "False", "abstained": "False"}
    if kind in ("c", "blank"):
        row.update(diagnosis="" if kind == "blank" else f"Dx{case}", likert=str(likert))
        row.update(final_score_authoritative="1", weighted_score=f"{likert}.0")
    elif kind == "w":
        row.update(diagnosis=f"Other{case}", likert=str(likert), final_score_authoritative="0")
        row["weighted_score"] = f"-{likert}.0"
    elif kind == "idk":
        row.update(diagnosis=IDK_SPELLINGS[n_idk % len(IDK_SPELLINGS)], abstained="True")
        row["final_score_authoritative"] = "0"
    elif kind == "fail:technical":
        row.update(diagnosis=f"Dx{case}", likert=str(likert), technical_failure="True")
        row["final_score_authoritative"] = "0"
    elif kind == "fail:diagnosis":
        row.update(diagnosis="PARSE_FAILED", final_score_authoritative="0")
    elif kind == "fail:likert":
        row.update(diagnosis=f"Dx{case}", likert="PARSE_FAILED", final_score_authoritative="0")
    return row


def _responders(models: tuple[str, ...]) -> Iterator[tuple[dict[str, str], list[Block]]]:
    for k in range(1, 13):
        code = f"R{k:02d}"
        trainee = SENIORITY[code].startswith("PGY")
        fixed = {
            "candidate": "Trainee" if trainee else "Radiologist",
            "provider": code,
            "access": "human",
            "domain": "human",
            "model_blinded": "Human",
            "rater_seniority": SENIORITY[code],
            "rater_seniority_rank": str(sorted(set(SENIORITY.values())).index(SENIORITY[code])),
        }
        yield fixed, reader_blocks(k)
    for i, name in enumerate(models):
        provider, access, domain, blocks = MODELS[name]
        yield (
            {
                "candidate": name,
                "provider": provider,
                "access": access,
                "domain": domain,
                "model_blinded": f"Candidate {chr(65 + i)}",
            },
            blocks,
        )


def master_csv(*, models: tuple[str, ...] = tuple(MODELS)) -> str:
    """The master as CSV text, rows case by case as RadLE's file has them."""
    responders = [(fixed, _expand(blocks)) for fixed, blocks in _responders(models)]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writeheader()
    idk_seen: dict[str, int] = {}
    for case in range(1, N_CASES + 1):
        for fixed, answers in responders:
            kind, likert = answers[case - 1]
            who = fixed["provider"] + fixed["candidate"]
            row = {c: "" for c in COLUMNS}
            row.update(run_id="radle_v2_blinded_combined", Master_Case_ID=str(case))
            row.update(Associated_Images=f"{case}.png", Ground_Truth_Diagnosis=f"Dx{case}")
            row.update(response_valid="True", score_required="True", final_score_source="test")
            row.update(fixed)
            row.update(_row(case, kind, likert, idk_seen.get(who, 0)))
            idk_seen[who] = idk_seen.get(who, 0) + (kind == "idk")
            if case == 1 and fixed["provider"] == "R01":  # RadLE reads neither flag
                row["abstained"] = "True"
            if case == 1 and fixed["provider"] == "R02":
                row["response_valid"] = "False"
            writer.writerow(row)
    return out.getvalue()

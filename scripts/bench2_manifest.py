"""Write a report-mode manifest for a folder of NIfTI volumes and a references CSV.

    python scripts/bench2_manifest.py FOLDER REFERENCES.csv > FOLDER/manifest.csv

REFERENCES.csv has the columns ``case_id,findings,impression`` (one reference
report per case; the volume is ``FOLDER/<case_id>.nii.gz`` or ``.nii``). Every
case becomes a 16-slice strip with ``answer = report``, intensity-normalized
to 8 bits as Bench 2 did (no window column: add one, or ``default_windows`` in
study.toml, to show CT windows instead); the impression's first line is its
short diagnosis key. Any problem is reported with its line and
nothing is written.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

COLUMNS = [
    "case_id", "kind", "files", "diagnosis", "synonyms", "history", "modality", "practice",
    "windows", "reviewed_by", "answer", "reference_findings", "reference_impression",
]  # fmt: skip


def manifest_rows(folder: Path, references: Path) -> list[dict[str, str]]:
    rows, problems = [], []
    with references.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        need = {"case_id", "findings", "impression"}
        if not need <= set(reader.fieldnames or []):
            raise ValueError(f"{references.name} line 1: needs the columns {sorted(need)}")
        for row in reader:
            where = f"{references.name} line {reader.line_num}"
            case_id = (row["case_id"] or "").strip()
            impression = (row["impression"] or "").strip()
            found = [
                p for p in (folder / f"{case_id}.nii.gz", folder / f"{case_id}.nii") if p.is_file()
            ]
            if not case_id or not impression:
                problems.append(f"{where}: case_id and impression are required")
            elif not found:
                problems.append(f"{where}: no {case_id}.nii.gz or {case_id}.nii in {folder}")
            else:
                rows.append(
                    {
                        "case_id": case_id,
                        "kind": "strip",
                        "files": found[0].name,
                        "diagnosis": impression.splitlines()[0][:300],
                        "modality": "CT",
                        "practice": "false",
                        "answer": "report",
                        "reference_findings": (row["findings"] or "").strip(),
                        "reference_impression": impression,
                    }
                )
    if problems:
        raise ValueError("\n".join(problems))
    return rows


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        rows = manifest_rows(Path(argv[0]), Path(argv[1]))
    except (OSError, ValueError) as exc:
        print(f"bench2_manifest: {exc}", file=sys.stderr)
        return 1
    writer = csv.DictWriter(sys.stdout, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({c: row.get(c, "") for c in COLUMNS})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""A realistic synthetic spot-diagnosis exam, for the grading-workload figures.

24 real entities, each with an answer key as a coordinator would write it
(reference + the synonyms one lists up front) and hand-written answer pools:
accepted forms the key does not list (eponyms, unlisted synonyms, typos,
correct extra specificity) and wrong answers ordered from the most common
(the near miss: carinatum for excavatum, the other side, the other subtype,
the secondary finding of a compound reference) to rarer ones.

12 readers (6 trainees, 6 board-certified) and 8 model runs answer every
case: "I don't know" with p_idk, else correct with p_correct (the form:
55 % the reference with cosmetic noise, 15 % a listed synonym, 30 % an
unlisted accepted form), else wrong (85 % from the case's pool with weights
1/rank, 15 % an answer from another case's pool). Seeded: the sample, and so
the figures in docs/grading.md, are reproducible. Run this file to write
the sample as CSV (tidy frame + key).
"""

from __future__ import annotations

import csv
import random
import sys
from dataclasses import dataclass
from typing import TextIO

SEED = 0


@dataclass(frozen=True)
class Entity:
    case_id: str
    reference: str
    synonyms: tuple[str, ...]
    unlisted: tuple[str, ...]  # accepted by a radiologist, not by the key
    wrong: tuple[str, ...]  # most common first


ENTITIES = (
    Entity(
        "c01",
        "Osteopoikilosis",
        ("Osteopathia condensans disseminata",),
        (
            "Spotted bone disease",
            "Osteopoikylosis",
            "Osteopoikilosis (Buschke-Ollendorff syndrome)",
        ),
        (
            "Osteoblastic metastases",
            "Bone islands",
            "Melorheostosis",
            "Osteopathia striata",
            "Mastocytosis",
        ),
    ),
    Entity(
        "c02",
        "Pectus excavatum",
        ("Funnel chest",),
        ("Pectus excavatum deformity", "Pectus excavatun", "Severe pectus excavatum"),
        ("Pectus carinatum", "Poland syndrome", "Right middle lobe pneumonia", "Normal chest"),
    ),
    Entity(
        "c03",
        "Pericallosal lipoma with agenesis of the corpus callosum",
        ("Pericallosal lipoma with callosal agenesis",),
        (
            "Interhemispheric lipoma with corpus callosum agenesis",
            "Tubulonodular pericallosal lipoma with callosal agenesis",
        ),
        (
            "Complete agenesis of corpus callosum",
            "Pericallosal lipoma",
            "Dermoid cyst",
            "Agenesis of the corpus callosum",
            "Interhemispheric cyst",
        ),
    ),
    Entity(
        "c04",
        "Carotid-cavernous fistula",
        ("CCF", "Caroticocavernous fistula"),
        (
            "Carotid cavernous sinus fistula",
            "Direct carotid-cavernous fistula",
            "Carotid-cavernous fistula with dilated superior ophthalmic vein",
            "Carotid-cavernus fistula",
        ),
        (
            "Orbital cellulitis",
            "Thyroid eye disease",
            "Cavernous sinus thrombosis",
            "Orbital varix",
            "Mucocele",
        ),
    ),
    Entity(
        "c05",
        "Left tension pneumothorax",
        ("Left-sided tension pneumothorax",),
        ("Tension pneumothorax on the left", "Left tension PTX"),
        (
            "Left pneumothorax",
            "Tension pneumothorax",
            "Right tension pneumothorax",
            "Bullous emphysema",
        ),
    ),
    Entity(
        "c06",
        "Type A aortic dissection",
        ("Stanford type A aortic dissection", "Stanford A dissection"),
        ("DeBakey type I aortic dissection", "Ascending aortic dissection", "Type A dissection"),
        (
            "Type B aortic dissection",
            "Intramural hematoma",
            "Aortic aneurysm",
            "Penetrating aortic ulcer",
        ),
    ),
    Entity(
        "c07",
        "Scaphoid fracture",
        ("Fracture of the scaphoid",),
        ("Scaphoid waist fracture", "Navicular fracture of the wrist", "Scaphiod fracture"),
        ("Distal radius fracture", "Normal wrist", "Scapholunate dissociation", "Kienbock disease"),
    ),
    Entity(
        "c08",
        "Pneumoperitoneum",
        ("Free intraperitoneal air", "Free air"),
        ("Free air under the diaphragm", "Pneumoperitoneum (Rigler sign)", "Pneumoperitonium"),
        ("Chilaiditi sign", "Small bowel obstruction", "Subphrenic abscess", "Normal abdomen"),
    ),
    Entity(
        "c09",
        "Ileocolic intussusception",
        ("Ileo-colic intussusception",),
        ("Ileocolic intussusception with target sign", "Ileocolic intusussception"),
        ("Intussusception", "Volvulus", "Appendicitis", "Meckel diverticulum"),
    ),
    Entity(
        "c10",
        "Acute appendicitis",
        ("Appendicitis",),
        (
            "Acute appendicitis with appendicolith",
            "Appendicitits",
            "Acute appendicitis, non-perforated",
        ),
        ("Mesenteric adenitis", "Terminal ileitis", "Crohn's disease", "Ovarian torsion"),
    ),
    Entity(
        "c11",
        "Sarcoidosis",
        ("Pulmonary sarcoidosis",),
        ("Sarcoid", "Stage II sarcoidosis", "Sarcoidossis"),
        ("Lymphoma", "Tuberculosis", "Silicosis", "Metastases", "Hypersensitivity pneumonitis"),
    ),
    Entity(
        "c12",
        "Osteoid osteoma",
        (),
        ("Osteoid osteoma of the femoral neck", "Osteiod osteoma", "Intracortical osteoid osteoma"),
        ("Brodie abscess", "Stress fracture", "Osteoblastoma", "Bone island", "Ewing sarcoma"),
    ),
    Entity(
        "c13",
        "Vestibular schwannoma",
        ("Acoustic neuroma", "Acoustic schwannoma"),
        ("Left vestibular schwannoma", "Vestibular schwanoma", "CP angle schwannoma"),
        ("Meningioma", "Epidermoid cyst", "Facial nerve schwannoma", "Arachnoid cyst"),
    ),
    Entity(
        "c14",
        "Tetralogy of Fallot",
        ("TOF",),
        ("Fallot tetralogy", "Tetralogy of Fallot (boot-shaped heart)", "Tetralogy of Fallott"),
        (
            "Transposition of the great arteries",
            "Ebstein anomaly",
            "Ventricular septal defect",
            "Pulmonary atresia",
        ),
    ),
    Entity(
        "c15",
        "Hydatid cyst of the liver",
        ("Hepatic hydatid cyst", "Hepatic echinococcosis"),
        (
            "Echinococcal cyst of the liver",
            "Liver hydatid cyst with daughter cysts",
            "Hydatic cyst liver",
        ),
        ("Liver abscess", "Simple hepatic cyst", "Biliary cystadenoma", "Cystic metastasis"),
    ),
    Entity(
        "c16",
        "Hirschsprung disease",
        ("Hirschsprung's disease", "Congenital aganglionic megacolon"),
        ("Hirschprung disease", "Short-segment Hirschsprung disease", "Hirschsprung"),
        ("Meconium ileus", "Functional constipation", "Anal atresia", "Meconium plug syndrome"),
    ),
    Entity(
        "c17",
        "Ankylosing spondylitis",
        ("AS", "Bechterew disease"),
        (
            "Bamboo spine (ankylosing spondylitis)",
            "Ankylosing spondilitis",
            "Axial spondyloarthritis",
        ),
        ("DISH", "Psoriatic arthritis", "Degenerative disc disease", "Fluorosis"),
    ),
    Entity(
        "c18",
        "Emphysematous pyelonephritis",
        (),
        ("Left emphysematous pyelonephritis", "Emphysematus pyelonephritis"),
        (
            "Emphysematous pyelitis",
            "Renal abscess",
            "Xanthogranulomatous pyelonephritis",
            "Acute pyelonephritis",
            "Staghorn calculus",
        ),
    ),
    Entity(
        "c19",
        "Subdural hematoma",
        ("SDH", "Subdural haematoma"),
        ("Acute-on-chronic subdural hematoma", "Left subdural hematoma", "Subdural hemorrhage"),
        ("Epidural hematoma", "Subarachnoid hemorrhage", "Subdural empyema", "Hygroma"),
    ),
    Entity(
        "c20",
        "Achalasia",
        ("Esophageal achalasia", "Achalasia cardia"),
        ("Achalasia of the oesophagus", "Bird's beak esophagus (achalasia)", "Achalsia"),
        (
            "Esophageal carcinoma",
            "Scleroderma esophagus",
            "Pseudoachalasia",
            "Diffuse esophageal spasm",
        ),
    ),
    Entity(
        "c21",
        "Perthes disease",
        ("Legg-Calve-Perthes disease", "Legg-Calvé-Perthes disease"),
        ("LCPD", "Perthes", "Left Perthes disease"),
        (
            "Slipped capital femoral epiphysis",
            "Septic arthritis of the hip",
            "Transient synovitis",
            "Meyer dysplasia",
        ),
    ),
    Entity(
        "c22",
        "Medullary sponge kidney",
        (),
        ("Medullary sponge kidneys", "Cacchi-Ricci disease", "Bilateral medullary sponge kidney"),
        (
            "Nephrocalcinosis",
            "Papillary necrosis",
            "Renal tuberculosis",
            "Polycystic kidney disease",
        ),
    ),
    Entity(
        "c23",
        "Morel-Lavallée lesion",
        (),
        ("Morel Lavallee lesion", "Closed degloving injury", "Morel-Lavallee seroma"),
        ("Hematoma", "Lipoma", "Abscess", "Soft tissue sarcoma"),
    ),
    Entity(
        "c24",
        "Caplan syndrome",
        ("Rheumatoid pneumoconiosis",),
        ("Caplan's syndrome", "Caplan syndrome (rheumatoid pneumoconiosis)"),
        (
            "Silicosis",
            "Rheumatoid nodules",
            "Metastases",
            "Sarcoidosis",
            "Granulomatosis with polyangiitis",
        ),
    ),
)


@dataclass(frozen=True)
class Responder:
    name: str
    kind: str
    group: str
    p_correct: float
    p_idk: float


RESPONDERS = (
    *(Responder(f"R{i:02d}", "human", "trainee", 0.45, 0.12) for i in range(1, 7)),
    *(Responder(f"R{i:02d}", "human", "board-certified", 0.62, 0.08) for i in range(7, 13)),
    *(
        Responder(f"model-{i}", "model", "provider", p, 0.03)
        for i, p in enumerate((0.35, 0.4, 0.45, 0.5, 0.5, 0.55, 0.6, 0.65), start=1)
    ),
)


def _cosmetic(text: str, rng: random.Random) -> str:
    """The reference as people type it: case, hyphens, a period, an article."""
    choice = rng.random()
    if choice < 0.35:
        return text
    if choice < 0.6:
        return text.lower()
    if choice < 0.7:
        return text.replace("-", " ")
    if choice < 0.8:
        return text + "."
    if choice < 0.9:
        return text.upper() if len(text) < 20 else text.capitalize()
    return "The " + text.lower() if not text.lower().startswith("the ") else text


def _answer(entity: Entity, who: Responder, rng: random.Random) -> tuple[str, str]:
    """(status, diagnosis) of one responder on one case."""
    if rng.random() < who.p_idk:
        return "idk", ""
    if rng.random() < who.p_correct:
        form = rng.random()
        if form < 0.55 or (form < 0.70 and not entity.synonyms):
            return "answered", _cosmetic(entity.reference, rng)
        if form < 0.70:
            return "answered", rng.choice(entity.synonyms)
        return "answered", rng.choice(entity.unlisted)
    if rng.random() < 0.15:
        other = rng.choice([e for e in ENTITIES if e is not entity])
        return "answered", rng.choice(other.wrong)
    weights = [1 / (rank + 1) for rank in range(len(entity.wrong))]
    return "answered", rng.choices(entity.wrong, weights=weights)[0]


def sample_rows(seed: int = SEED) -> list[dict[str, str]]:
    """The tidy frame of the synthetic exam: one row per (responder, case)."""
    rng = random.Random(seed)
    rows = []
    for entity in ENTITIES:
        for who in RESPONDERS:
            status, diagnosis = _answer(entity, who, rng)
            rows.append(
                {
                    "responder": who.name,
                    "kind": who.kind,
                    "group": who.group,
                    "case_id": entity.case_id,
                    "status": status,
                    "diagnosis": diagnosis,
                    "likert": "" if status == "idk" else str(rng.randint(0, 4)),
                    "correct": "",
                }
            )
    return rows


def key_rows(with_synonyms: bool = True) -> list[dict[str, str]]:
    return [
        {
            "case_id": e.case_id,
            "diagnosis": e.reference,
            "synonyms": "|".join(e.synonyms) if with_synonyms else "",
        }
        for e in ENTITIES
    ]


def write_csv(rows: list[dict[str, str]], out: TextIO) -> None:
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)


if __name__ == "__main__":  # python -m tests.reader_app.grading.synthetic_sample key|responses
    write_csv(key_rows() if sys.argv[1:] == ["key"] else sample_rows(), sys.stdout)

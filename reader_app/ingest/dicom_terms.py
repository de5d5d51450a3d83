"""DICOM header values checked against their value representation and defined terms.

A header value is only ever used (or stored, like a case's modality) after it
has passed these checks. Messages name the file and the element, never the
value: a value that fails a check is exactly the kind that may hold a name.
"""

from __future__ import annotations

import re

from pydicom.dataelem import DataElement
from pydicom.dataset import Dataset
from pydicom.multival import MultiValue
from pydicom.uid import UID_dictionary  # type: ignore[attr-defined]

from reader_app.ingest.errors import IngestError

# PS3.3 C.7.3.1.1.1 defined terms for Modality (0008,0060), with the retired
# terms still written by older equipment.
_TERMS = (
    "ANN AR ASMT AU BDUS BI BMD CFM CR CT CTPROTOCOL DG DMS DOC DX ECG EEG EMG EOG EPS ES "
    "FID GM HC HD IO IOL IVOCT IVUS KER KO LEN LS M3D MG MR NM OAM OCT OP OPM OPT OPTBSV "
    "OPTENF OPV OSS OT PA PLAN POS PR PT PX REG RESP RF RG RTDOSE RTIMAGE RTINTENT RTPLAN "
    "RTRAD RTRECORD RTSEGANN RTSTRUCT RWV SEG SM SMR SR SRF STAIN TEXTUREMAP TG US VA XA "
    "XAPROTOCOL XC "
    # retired, still seen in the wild
    "CD CF CP CS DD DF DM DS EC FA FS LP MA MS OPR SC ST VF"
)
KNOWN_MODALITIES = frozenset(_TERMS.split())
# Modalities whose images routinely carry text burned into the pixels: projection
# radiography, mammography, ultrasound, captures, photographs, endoscopy.
BURNED_IN_MODALITIES = frozenset(
    {"CR", "DX", "MG", "IO", "PX", "US", "IVUS", "SC", "OT", "XC", "ES", "GM", "SM", "OP", "DOC"}
)
# The same rule for SOP classes, by their registered names, so that every present
# and future class of these families is covered (pydicom's UID dictionary).
_RISKY_CLASS = re.compile(
    r"Computed Radiography|Digital X-Ray|Mammography|Intra-Oral|Ultrasound|Secondary Capture"
    r"|^VL |Video|Photograph|Endoscop|Dermoscop",
)
RISKY_SOP_CLASSES = frozenset(
    uid
    for uid, (name, kind, *_rest) in UID_dictionary.items()
    if kind == "SOP Class" and _RISKY_CLASS.search(name)
)
_CS = re.compile(r"^[A-Z0-9_ ]{0,16}$")  # PS3.5 6.2: upper case, digits, space, underscore
_UI = re.compile(r"^[0-9.]{1,64}$")

MODALITY_TAG = "Modality (0008,0060)"
BURNED_IN_TAG = "BurnedInAnnotation (0028,0301)"
SOP_CLASS_TAG = "SOPClassUID (0008,0016)"


def _single(elem: DataElement, name: str, label: str) -> str:
    value = elem.value
    if isinstance(value, MultiValue | list | tuple):
        if len(value) > 1:
            raise IngestError(name, f"element {label} holds {len(value)} values; expected one")
        value = value[0] if value else ""
    if isinstance(value, bytes):
        raise IngestError(name, f"element {label} is not text")
    return "" if value is None else str(value)


def header_modality(ds: Dataset, name: str) -> str | None:
    """Modality as a single CS value from the defined terms, or None when absent."""
    if "Modality" not in ds:
        return None
    raw = _single(ds["Modality"], name, MODALITY_TAG).strip()
    if not raw:
        return None
    if not _CS.match(raw) or raw not in KNOWN_MODALITIES:
        raise IngestError(
            name, f"element {MODALITY_TAG} is not a DICOM defined term (CS, e.g. CT, MR, US)"
        )
    return raw


def header_burned_in(ds: Dataset, name: str) -> str | None:
    """BurnedInAnnotation: YES, NO, or None when absent or empty."""
    if "BurnedInAnnotation" not in ds:
        return None
    raw = _single(ds["BurnedInAnnotation"], name, BURNED_IN_TAG).strip().upper()
    if not raw:
        return None
    if raw not in ("YES", "NO"):
        raise IngestError(name, f"element {BURNED_IN_TAG} must be YES or NO")
    return raw


def header_sop_class(ds: Dataset, name: str) -> str | None:
    if "SOPClassUID" not in ds:
        return None
    raw = _single(ds["SOPClassUID"], name, SOP_CLASS_TAG).strip().rstrip("\0")
    if not raw:
        return None
    if not _UI.match(raw):
        raise IngestError(name, f"element {SOP_CLASS_TAG} is not a UID")
    return raw


def manifest_modality(value: str) -> str:
    """A modality written in the manifest: a defined term, or ValueError."""
    term = value.strip().upper()
    if term not in KNOWN_MODALITIES:
        raise ValueError("is not a DICOM modality defined term (e.g. CT, MR, US, CR)")
    return term


__all__ = [
    "BURNED_IN_MODALITIES",
    "KNOWN_MODALITIES",
    "RISKY_SOP_CLASSES",
    "header_burned_in",
    "header_modality",
    "header_sop_class",
    "manifest_modality",
]

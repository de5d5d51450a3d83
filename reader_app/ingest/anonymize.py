"""Anonymization by allowlist, and the burned-in-annotation guard.

We never try to find and remove identifying elements (a denylist always misses
one, e.g. a private tag). Instead a fresh dataset receives copies of the few
elements that rendering needs, and the original is dropped. Nothing of a
header, file name or path is ever stored: only rendered pixels.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from pydicom.dataset import Dataset, FileMetaDataset
from pydicom.uid import UID

from reader_app.ingest.dicom_terms import (
    BURNED_IN_MODALITIES,
    RISKY_SOP_CLASSES,
    header_burned_in,
    header_modality,
    header_sop_class,
)

SECONDARY_CAPTURE_PREFIX = "1.2.840.10008.5.1.4.1.1.7"  # SC, and its multi-frame variants

# What rendering (and the burned-in guard) needs; everything else is dropped.
RENDER_KEYWORDS = (
    "Modality",
    "SOPClassUID",
    "BurnedInAnnotation",
    "SamplesPerPixel",
    "PhotometricInterpretation",
    "Rows",
    "Columns",
    "BitsAllocated",
    "BitsStored",
    "HighBit",
    "PixelRepresentation",
    "RescaleSlope",
    "RescaleIntercept",
    "RescaleType",
    "ModalityLUTSequence",
    "WindowCenter",
    "WindowWidth",
    "VOILUTFunction",
    "VOILUTSequence",
    "ImagePositionPatient",
    "ImageOrientationPatient",
    "PixelSpacing",
)


@dataclass
class DropCount:
    """How much of the headers was left behind (counts only: never values)."""

    files: int = 0
    elements: int = 0
    private: int = 0
    overlays: int = 0

    def add(self, other: DropCount) -> None:
        self.files += other.files
        self.elements += other.elements
        self.private += other.private
        self.overlays += other.overlays


def rendering_dataset(ds: Dataset) -> tuple[Dataset, DropCount]:
    """Copy only RENDER_KEYWORDS into a new dataset; count what was left behind."""
    safe = Dataset()
    kept = 0
    for keyword in RENDER_KEYWORDS:
        if keyword in ds:
            safe.add(copy.deepcopy(ds[keyword]))  # a copy: nothing keeps ds alive
            kept += 1
    tsyntax = getattr(getattr(ds, "file_meta", None), "TransferSyntaxUID", None)
    if tsyntax is not None:
        # pydicom needs it to read an OW modality/VOI LUT; a UID of a format, not a person
        safe.file_meta = FileMetaDataset()
        safe.file_meta.TransferSyntaxUID = tsyntax
    elements = [e for e in ds if e.tag != 0x7FE00010]  # pixel data is what we render
    drop = DropCount(
        files=1,
        elements=len(elements) - kept,
        private=sum(1 for e in elements if e.tag.is_private),
        overlays=sum(1 for e in elements if 0x6000 <= e.tag.group <= 0x601E),
    )
    return safe, drop


def needs_burned_in_review(ds: Dataset, name: str, modality: str | None = None) -> str | None:
    """Why this image must be reviewed before use, or None when it is cleared.

    A rule, not a list of cases: any image whose BurnedInAnnotation is YES, and
    any image whose modality (header or ``modality``, the manifest's) or SOP
    class belongs to a family that routinely carries names and dates burned
    into the pixels (projection radiographs, mammography, ultrasound,
    captures, photographs) unless its header says BurnedInAnnotation NO.
    A named reviewer clears either (see ``refusal``). Raises IngestError
    when one of these elements breaks its value representation.
    """
    flag = header_burned_in(ds, name)
    own = header_modality(ds, name)
    sop_class = header_sop_class(ds, name)
    if flag == "YES":
        return f"BurnedInAnnotation is YES for {_describe(own, sop_class)}"
    risky = [m for m in (own, modality) if m in BURNED_IN_MODALITIES]
    if flag == "NO" or not (risky or sop_class in RISKY_SOP_CLASSES):
        return None
    return f"BurnedInAnnotation is absent for {_describe(risky[0] if risky else None, sop_class)}"


def _describe(modality: str | None, sop_class: str | None) -> str:
    if sop_class and sop_class.startswith(SECONDARY_CAPTURE_PREFIX):
        return "a secondary capture image"
    if modality:
        return f"a {modality} image"
    if sop_class in RISKY_SOP_CLASSES:
        return f"an image of SOP class {UID(sop_class).name!r}"
    return "an image"


RASTER_REVIEW = "a PNG/JPEG has no BurnedInAnnotation; text may be burned into the pixels"


def refusal(problem: str, reviewed_by: str | None) -> str | None:
    """The refusal message, or None when a named reviewer has cleared the case."""
    if reviewed_by:
        return None
    return f"{problem}; refused: check the pixels and set reviewed_by to the reviewer's name"

"""One manifest entry -> its rendered images (in memory). Nothing is written here.

Raises IngestError naming the file and the problem. Refusals by the
burned-in guard raise Refused, so the report can list them apart.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reader_app.casebank import RenderedImage
from reader_app.ingest.anonymize import RASTER_REVIEW, needs_burned_in_review, refusal
from reader_app.ingest.dicom_reader import read_dicom_image, sniff
from reader_app.ingest.errors import IngestError
from reader_app.ingest.manifest import Manifest, ManifestEntry
from reader_app.ingest.nifti_reader import open_nifti
from reader_app.ingest.raster import read_raster
from reader_app.ingest.render import SourceImage, encode_png, grey_to_uint8, resolve_windows
from reader_app.ingest.report import IngestionReport
from reader_app.ingest.series import read_series, series_files
from reader_app.ingest.strips import build_strip
from reader_app.ingest.volume import Volume


class Refused(IngestError):
    """The burned-in guard said no."""


@dataclass(frozen=True)
class PreparedCase:
    entry: ManifestEntry
    images: list[RenderedImage]
    modality: str | None


def prepare_case(
    entry: ManifestEntry,
    manifest: Manifest,
    *,
    config: dict[str, Any],
    max_pixels: int,
    report: IngestionReport,
) -> PreparedCase:
    with warnings.catch_warnings():
        # pydicom's header-validation warnings can quote header values (names,
        # dates): they must not reach a terminal or a log.
        warnings.simplefilter("ignore", UserWarning)
        if entry.kind == "spot":
            images, modality, notes = _spot(entry, manifest, config, max_pixels, report)
        else:
            images, modality, notes = _strip(entry, manifest, config, max_pixels, report)
    if entry.reviewed_by:
        report.reviewed.append(f"case {entry.case_id}: reviewed by {entry.reviewed_by}")
    report.read.append(f"case {entry.case_id} ({entry.kind}): {'; '.join(notes)}")
    return PreparedCase(entry=entry, images=images, modality=entry.modality or modality)


def _guard(entry: ManifestEntry, name: str, problem: str | None) -> None:
    message = refusal(problem, entry.reviewed_by) if problem else None
    if message:
        raise Refused(name, message)


def _spot(
    entry: ManifestEntry,
    manifest: Manifest,
    config: dict[str, Any],
    max_pixels: int,
    report: IngestionReport,
) -> tuple[list[RenderedImage], str | None, list[str]]:
    images: list[RenderedImage] = []
    notes: list[str] = []
    modality: str | None = None
    for i, path in enumerate(entry.files, start=1):
        name = manifest.rel(path)
        kind = sniff(path)
        if kind == "dicom":
            source, safe, drop = read_dicom_image(path, name, max_pixels)
            _guard(entry, name, needs_burned_in_review(safe))
            report.headers.add(drop)
            modality = modality or source.modality
            notes.append(f"{name}: DICOM {source.modality or '?'} {_size(source)}")
        elif kind == "raster":
            _guard(entry, name, RASTER_REVIEW)
            source, dropped = read_raster(path, name, max_pixels)
            if dropped:
                report.raster_dropped.append(f"{name}: {', '.join(dropped)}")
            notes.append(f"{name}: raster {_size(source)}")
            if not source.ready and entry.windows:
                raise IngestError(name, "windows apply to grey DICOM/NIfTI, not to this image")
        elif kind in ("folder", "nifti"):
            raise IngestError(name, "a spot case takes single images; use kind strip for volumes")
        else:
            raise IngestError(name, "not a DICOM, NIfTI, PNG or JPEG file")
        prefix = f"image {i}/{len(entry.files)}" if len(entry.files) > 1 else ""
        images += _render_spot(entry, name, source, config, prefix)
    notes.append(f"-> {len(images)} PNG(s)")
    return images, modality, notes


def _render_spot(
    entry: ManifestEntry, name: str, source: SourceImage, config: dict[str, Any], prefix: str
) -> list[RenderedImage]:
    if source.ready:
        if entry.windows:
            raise IngestError(name, "windows apply to grey DICOM/NIfTI, not to this image")
        return [encode_png(source.pixels, label=prefix)]
    windows = resolve_windows(
        entry.windows,
        kind="spot",
        has_file_window=source.voi is not None,
        modality=source.modality,
        default_windows=config["default_windows"],
    )
    out = []
    for window in windows:
        try:
            pixels = grey_to_uint8(source, window)
        except ValueError as exc:
            raise IngestError(name, f"window {window!r}: {exc}") from exc
        label = " · ".join(p for p in (prefix, window if len(windows) > 1 else "") if p)
        out.append(encode_png(pixels, label=label, window=window))
    return out


def _strip(
    entry: ManifestEntry,
    manifest: Manifest,
    config: dict[str, Any],
    max_pixels: int,
    report: IngestionReport,
) -> tuple[list[RenderedImage], str | None, list[str]]:
    volume = _open_volume(entry, manifest, max_pixels, report)
    windows = resolve_windows(
        entry.windows,
        kind="strip",
        has_file_window=volume.file_window is not None,
        modality=entry.modality or volume.modality,
        default_windows=config["default_windows"],
    )
    name = manifest.rel(entry.files[0])
    try:
        images = build_strip(volume, windows)
    except ValueError as exc:
        raise IngestError(name, str(exc)) from exc
    notes = [
        f"{name}: {volume.description}",
        f"-> {len(images)} PNG(s), windows {', '.join(windows)}",
    ]
    return images, volume.modality, notes


def _open_volume(
    entry: ManifestEntry, manifest: Manifest, max_pixels: int, report: IngestionReport
) -> Volume:
    kinds = [sniff(p) for p in entry.files]
    name = manifest.rel(entry.files[0])
    if kinds == ["nifti"]:
        return open_nifti(entry.files[0], name, max_pixels)
    files: Sequence[Path]
    if kinds == ["folder"]:
        files = series_files(entry.files[0], name, manifest.root)
    elif all(k == "dicom" for k in kinds):
        files, name = entry.files, f"{name} (+{len(entry.files) - 1} files)"
    else:
        raise IngestError(name, "a strip takes one folder (DICOM series), one NIfTI or DICOM files")
    volume, first = read_series(files, name, max_pixels, manifest.rel, report.headers)
    _guard(entry, name, needs_burned_in_review(first))
    return volume


def _size(source: SourceImage) -> str:
    h, w = source.pixels.shape[:2]
    return f"{w}x{h}" + (" colour" if source.pixels.ndim == 3 else "")

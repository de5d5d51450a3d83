"""One manifest entry -> its rendered images (in memory). Nothing is written here.

Raises IngestError naming the file and the problem. Refusals by the
burned-in guard raise Refused, so the report can list them apart.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from reader_app.core.errors import ReaderStudyError
from reader_app.core.settings import Settings
from reader_app.ingest.anonymize import RASTER_REVIEW, needs_burned_in_review, refusal
from reader_app.ingest.dicom_reader import read_dicom_image, sniff
from reader_app.ingest.errors import IngestError
from reader_app.ingest.manifest import Manifest, ManifestEntry
from reader_app.ingest.nifti_reader import open_nifti
from reader_app.ingest.raster import read_raster
from reader_app.ingest.reference import Reference, StoredGrid, read_reference, spot_grid
from reader_app.ingest.render import (
    SourceImage,
    encode_png,
    encode_values,
    grey_to_uint8,
    resolve_windows,
)
from reader_app.ingest.report import FlaggedImage, IngestionReport
from reader_app.ingest.series import read_series, series_files
from reader_app.ingest.strips import build_strip, strip_indices
from reader_app.ingest.volume import Volume
from reader_app.study.casebank import RenderedImage
from reader_app.study.config import StudyConfig


class Refused(IngestError):
    """The burned-in guard said no."""


class CaseRefused(ReaderStudyError):
    """The guard refused one or more images of a case (each a Refused, all reported)."""

    def __init__(self, refusals: list[Refused], error: IngestError | None = None) -> None:
        super().__init__("; ".join(map(str, [*refusals, *([error] if error else [])])))
        self.refusals = refusals
        self.error = error  # a problem met after the first refusal, reported too


@dataclass(frozen=True)
class Limits:
    """The memory caps of an import: READERSTUDY_MAX_PIXELS, _MAX_VOXELS, _MAX_INFLATE_BYTES."""

    max_pixels: int  # one 2-D image: a picture, a DICOM frame, a slice
    max_voxels: int  # one volume: a DICOM series or a NIfTI
    max_inflate_bytes: int  # decompressed size of a .nii.gz, decompressed end to end

    @classmethod
    def of(cls, settings: Settings) -> Limits:
        return cls(settings.max_pixels, settings.max_voxels, settings.max_inflate_bytes)


@dataclass(frozen=True)
class PreparedCase:
    entry: ManifestEntry
    images: list[RenderedImage]
    modality: str | None
    reference: Reference = field(default_factory=Reference)  # the key's region or mask


def prepare_case(
    entry: ManifestEntry,
    manifest: Manifest,
    *,
    config: StudyConfig,
    limits: Limits,
    report: IngestionReport,
) -> PreparedCase:
    flags: list[Refused] = []
    guard = _Guard(entry, report, flags)
    reference = Reference()
    with warnings.catch_warnings():
        # pydicom's header-validation warnings can quote header values (names,
        # dates): they must not reach a terminal or a log.
        warnings.simplefilter("ignore", UserWarning)
        try:
            if entry.kind == "spot":
                images, modality, notes, grid = _spot(
                    entry, manifest, config, limits, report, guard
                )
            else:
                images, modality, notes, grid = _strip(
                    entry, manifest, config, limits, report, guard
                )
            if not flags:  # a refused case is not imported: its region need not be read
                reference = read_reference(
                    entry,
                    manifest,
                    grid,
                    max_pixels=limits.max_pixels,
                    max_voxels=limits.max_voxels,
                    max_inflate_bytes=limits.max_inflate_bytes,
                )
        except IngestError as exc:
            if flags and not isinstance(exc, Refused):
                raise CaseRefused(flags, exc) from exc
            raise
    if flags:
        raise CaseRefused(flags)
    if entry.reviewed_by:
        report.reviewed.append(f"case {entry.case_id}: reviewed by {entry.reviewed_by}")
    report.read.append(f"case {entry.case_id} ({entry.kind}): {'; '.join(notes)}")
    return PreparedCase(
        entry=entry, images=images, modality=entry.modality or modality, reference=reference
    )


@dataclass
class _Guard:
    """Checks every image of a case; records each flag, refuses only at the end of the case."""

    entry: ManifestEntry
    report: IngestionReport
    flags: list[Refused]

    def __call__(self, name: str, problem: str | None) -> None:
        if not problem:
            return
        entry = self.entry
        self.report.flagged.append(FlaggedImage(entry.case_id, name, problem, entry.reviewed_by))
        message = refusal(problem, entry.reviewed_by)
        if message:
            self.flags.append(Refused(name, message))


def _spot(
    entry: ManifestEntry,
    manifest: Manifest,
    config: StudyConfig,
    limits: Limits,
    report: IngestionReport,
    guard: _Guard,
) -> tuple[list[RenderedImage], str | None, list[str], StoredGrid | None]:
    images: list[RenderedImage] = []
    notes: list[str] = []
    modality: str | None = None
    source_shapes: list[tuple[int, int]] = []
    for i, path in enumerate(entry.files, start=1):
        name = manifest.rel(path)
        kind = sniff(path)
        if kind == "dicom":
            source, safe, drop = read_dicom_image(path, name, limits.max_pixels)
            guard(name, needs_burned_in_review(safe, name, entry.modality))
            report.headers.add(drop)
            modality = modality or source.modality
            notes.append(f"{name}: DICOM {source.modality or '?'} {_size(source)}")
        elif kind == "raster":
            guard(name, RASTER_REVIEW)
            source, dropped = read_raster(path, name, limits.max_pixels)
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
        rendered = _render_spot(entry, name, source, config, prefix)
        images += rendered
        source_shapes += [(source.pixels.shape[0], source.pixels.shape[1])] * len(rendered)
    notes.append(f"-> {len(images)} PNG(s)")
    grid = spot_grid([(im.width, im.height) for im in images], source_shapes)
    return images, modality, notes, grid


def _render_spot(
    entry: ManifestEntry, name: str, source: SourceImage, config: StudyConfig, prefix: str
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
        default_windows=list(config.default_windows),
    )
    out = []
    for window in windows:
        try:
            pixels = grey_to_uint8(source, window)
        except ValueError as exc:
            raise IngestError(name, f"window {window!r}: {exc}") from exc
        label = " · ".join(p for p in (prefix, window if len(windows) > 1 else "") if p)
        out.append(encode_png(pixels, label=label, window=window, pixel_mm=source.pixel_mm))
    if config.original_values:  # the same values behind every window's render
        values = encode_values(source.pixels, (out[0].width, out[0].height))
        out = [replace(im, values_png=values) for im in out]
    return out


def _strip(
    entry: ManifestEntry,
    manifest: Manifest,
    config: StudyConfig,
    limits: Limits,
    report: IngestionReport,
    guard: _Guard,
) -> tuple[list[RenderedImage], str | None, list[str], StoredGrid]:
    volume = _open_volume(entry, manifest, limits, report, guard)
    windows = resolve_windows(
        entry.windows,
        kind="strip",
        has_file_window=volume.file_window is not None,
        modality=entry.modality or volume.modality,
        default_windows=list(config.default_windows),
    )
    name = manifest.rel(entry.files[0])
    try:
        images = build_strip(volume, windows, original_values=config.original_values)
    except ValueError as exc:
        raise IngestError(name, str(exc)) from exc
    notes = [
        f"{name}: {volume.description}",
        f"-> {len(images)} PNG(s), windows {', '.join(windows)}",
    ]
    return images, volume.modality, notes, _strip_grid(entry, volume, images)


def _strip_grid(entry: ManifestEntry, volume: Volume, images: list[RenderedImage]) -> StoredGrid:
    """The strip's slices as stored; a mask needs the source slice's shape (one more read)."""
    sampled = tuple(strip_indices(volume.n_slices))  # strip order: most superior first
    first = next(im for im in images if im.role == "slice")
    source_shape = (first.height, first.width)
    if entry.reference_mask is not None:
        rows, cols = volume.read_slice(sampled[0]).shape
        source_shape = (rows, cols)
    return StoredGrid(
        first.width, first.height, source_shape, sampled, volume.n_slices, affine=volume.affine
    )


def _open_volume(
    entry: ManifestEntry,
    manifest: Manifest,
    limits: Limits,
    report: IngestionReport,
    guard: _Guard,
) -> Volume:
    kinds = [sniff(p) for p in entry.files]
    name = manifest.rel(entry.files[0])
    if kinds == ["nifti"]:
        return open_nifti(entry.files[0], name, limits.max_voxels, limits.max_inflate_bytes)
    files: Sequence[Path]
    if kinds == ["folder"]:
        files = series_files(entry.files[0], name, manifest.root)
    elif all(k == "dicom" for k in kinds):
        files, name = entry.files, f"{name} (+{len(entry.files) - 1} files)"
    else:
        raise IngestError(name, "a strip takes one folder (DICOM series), one NIfTI or DICOM files")
    volume, headers = read_series(
        files, name, limits.max_pixels, manifest.rel, report.headers, max_voxels=limits.max_voxels
    )
    for file_name, header in headers:  # every file of the series, not only the first
        guard(file_name, needs_burned_in_review(header, file_name, entry.modality))
    if guard.flags:  # refuse before rendering the strip
        raise CaseRefused(guard.flags)
    return volume


def _size(source: SourceImage) -> str:
    h, w = source.pixels.shape[:2]
    return f"{w}x{h}" + (" colour" if source.pixels.ndim == 3 else "")

"""Data for fastbudget: synthetic streams, chunked file readers, streaming standardisation and
loaders for the papers' benchmark sets.

- :mod:`.generators`: ``make_checkerboard``, ``make_gauss``, ``make_waveform``,
  ``make_streamsvm_synthetic``, ``make_drifting_gaussians`` and ``stream_chunks`` (seeded;
  the same seed gives the same stream whatever the chunk size).
- :mod:`.readers`: ``read_libsvm`` and ``read_csv`` yield ``(X_chunk, y_chunk)`` in constant
  memory from plain, gzip, bzip2 or xz files, file objects or standard input (``'-'``).
- :mod:`.standardize`: ``StreamingStandardizer`` (warm-up window, then frozen; or one full pass).
- :mod:`.loaders`: ``load_paper_dataset(name, data_dir)``.
"""
from .generators import (
    make_checkerboard,
    make_drifting_gaussians,
    make_gauss,
    make_streamsvm_synthetic,
    make_waveform,
    stream_chunks,
)
from .loaders import PAPER_DATASETS, load_paper_dataset
from .readers import collect, read_csv, read_libsvm
from .standardize import StreamingStandardizer

__all__ = [
    "make_checkerboard", "make_gauss", "make_waveform", "make_streamsvm_synthetic",
    "make_drifting_gaussians", "stream_chunks", "read_libsvm", "read_csv", "collect",
    "StreamingStandardizer", "load_paper_dataset", "PAPER_DATASETS",
]

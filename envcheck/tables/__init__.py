"""Versioned, sourced compatibility tables (compat_tables/*.json) and their questions."""

from .load import ENV_VAR, TABLE_NAMES, TableError, builtin_dir, load_tables, tables_dir_from_env
from .model import PLATFORMS, Release, Tables

__all__ = [
    "ENV_VAR",
    "PLATFORMS",
    "TABLE_NAMES",
    "Release",
    "TableError",
    "Tables",
    "builtin_dir",
    "load_tables",
    "tables_dir_from_env",
]

"""Pigeon's local state on disk. No Textual here."""

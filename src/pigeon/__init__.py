"""Pigeon: a keyboard-driven terminal mail client."""

__version__ = "0.1.0"

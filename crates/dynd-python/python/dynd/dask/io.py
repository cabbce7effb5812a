"""Readers and writers (filled in below)."""

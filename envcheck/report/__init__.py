"""Rendering: Facts (and later findings) as text for people or JSON for machines."""

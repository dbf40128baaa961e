"""Widgets the panes share: the problem screen, the confirmation dialog, the one-field form."""

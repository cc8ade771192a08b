"""Durable files and folders: synced writes, records that verify, atomic publishing."""

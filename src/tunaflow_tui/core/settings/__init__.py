"""Configuration: user and project TOML files, env overrides ``TUNAFLOW_*``."""

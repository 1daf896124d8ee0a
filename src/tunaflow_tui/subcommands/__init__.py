"""One module per `tunaflow` subcommand; each exposes ``add_arguments(parser)`` and ``run(args) -> int``."""

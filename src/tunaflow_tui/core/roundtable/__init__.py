"""Roundtables (spec §5): several agents discuss one topic in a branch with mode ``roundtable``.

Pure parts, no model, no database: :mod:`.seats` (who sits, roles, guidance, output limits, the
``NAME=ENGINE[:ROLE][:blind]`` spec), :mod:`.prompts` (what each seat is sent), :mod:`.references`
(whom a sequential answer responds to), :mod:`.ranking` (the anonymous peer ranking and its Borda
count) and :mod:`.brief` (Key Positions without a model call). The runtime runs the rounds
(``tunaflow_tui.runtime.roundtable``).
"""

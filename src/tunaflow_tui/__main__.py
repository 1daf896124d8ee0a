from tunaflow_tui.cli import main

raise SystemExit(main())

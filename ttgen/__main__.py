from ttgen.cli import main

raise SystemExit(main())

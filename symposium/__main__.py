from symposium.cli import main

raise SystemExit(main())

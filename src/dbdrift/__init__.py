"""dbdrift: find performance regressions between DBMS versions and configurations."""

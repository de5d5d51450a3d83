"""A study's case bank and settings: studies, cases, images and answer keys (``casebank``),
the content-addressed PNG store (``assets``), ``study.toml``'s one schema (``config``), a
case's answer mode and reference report (``case_reports``), display windows by name
(``window_presets``) and the coordinator's open/lock/close switch (``admin``)."""

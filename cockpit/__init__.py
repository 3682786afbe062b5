"""cockpit: a terminal incident cockpit for GPU inference and training services on Kubernetes.

The package is split in two halves:

* the core (``cockpit.sources``, ``cockpit.analysis``, ``cockpit.knowledge``,
  ``cockpit.incident``, ``cockpit.store``, ``cockpit.export``, ``cockpit.config``,
  ``cockpit.flow``, ``cockpit.models``, ``cockpit.i18n``), which never imports Textual;
* the UI (``cockpit.app``, ``cockpit.ui``, ``cockpit.screens``, ``cockpit.plugins``).
"""

__version__ = "0.1.0"

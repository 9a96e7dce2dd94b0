"""Every hook's consumers, declared in one place in the order they run, with the locks each
takes (``loopweb.pipeline.consumers``), and connected so at startup (``loopweb.pipeline.apps``)."""

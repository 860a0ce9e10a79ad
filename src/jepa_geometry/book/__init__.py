"""The book: its pages and how they run, what a reader sees of them, and their figures.

- :mod:`.toc`: the pages ``_toc.yml`` lists and the chapter each executes (task pages included);
- :mod:`.parameters`: a chapter's parameters cell, and what each parameter may be;
- :mod:`.run`: one chapter with papermill, a reader's own run, the whole book's build;
- :mod:`.present`: a page's first call (``setup_chapter``) and its plumbing hidden;
- :mod:`.display`: how a page shows a data frame;
- :mod:`.page_log`: what a page's build finished, relayed while it runs;
- :mod:`.papermill_io`: papermill reading MyST chapters by any path;
- :mod:`.html`: Jupyter Book's HTML build with the profile banner;
- :mod:`.evidence`: the glued values of the executed pages, kept and compared;
- :mod:`.tables`: the tables and sentences the pages show, one module per family of chapters;
- :mod:`.plots`: the figures, one module per family of chapters.
"""

"""``fastbudget reproduce NAME``: a paper's table or figure as a Markdown report
(:mod:`fastbudget.reproduce`)."""


def run(opts, args):
    """Run ``fastbudget reproduce``; returns the exit status."""
    from ... import reproduce        # (imports scikit-learn and the plots only when asked for)
    return reproduce.run_cli(args)

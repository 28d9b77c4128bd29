"""Python threads for the concurrency tests."""

import threading


def in_threads(jobs):
    """Run the jobs (callables) in one Python thread each, all at once; their results."""
    results = [None] * len(jobs)
    errors = []
    start = threading.Barrier(len(jobs))

    def run(i):
        try:
            start.wait()
            results[i] = jobs[i]()
        except BaseException as error:  # re-raised in the test's thread
            errors.append(error)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results

"""The Ganeti half of contrib/testbed/reset, in one process through Ganeti's own client.

Each gnt-* command starts a Python interpreter and imports Ganeti (0.2-1 s each, about twenty
of them per reset, and one `gnt-instance remove` per instance): the tests reset the cluster
before every scenario, so `reset` spent most of its time starting Python. This does the same
steps, in the same order, as one client of the master's luxi socket:

  - cancel queued and waiting jobs, wait for running ones
  - Ganeti runs up to 20 jobs at once (a test may have died with it lowered)
  - both nodes online, not drained, master candidates
  - no instances (removed side by side, then waited for)
  - no cluster, node group or node tags
  - finished jobs archived (each on its own: Ganeti 3.0.2 refuses to archive a job canceled
    before it started, and a refused one must not keep the others listed)

Run by `reset` with PYTHONPATH pointing at Ganeti's modules; prints what it changes on stderr.
"""

import sys
import time

from ganeti import cli, constants, opcodes

FINISHED = ("success", "error", "canceled")


def log(message):
    sys.stderr.write("[testbed %s] %s\n" % (time.strftime("%H:%M:%S"), message))


def wait(cl, ids, timeout=180):
    """Waits until every job in `ids` has finished; returns their statuses."""
    deadline = time.time() + timeout
    while True:
        statuses = [row[0] for row in cl.QueryJobs(ids, ["status"])] if ids else []
        if all(s in FINISHED for s in statuses):
            return statuses
        if time.time() > deadline:
            raise SystemExit("jobs %s still unfinished after %d s" % (ids, timeout))
        time.sleep(0.05)


def run(cl, ops, what):
    """Submits `ops` as one job, waits for it, and fails loudly unless it succeeded."""
    job = cl.SubmitJob(ops)
    (status,) = wait(cl, [job])
    if status != "success":
        raise SystemExit("%s: job %s ended %s" % (what, job, status))


def tag_removals(cl):
    """The opcodes that remove every tag of the cluster, its groups and its nodes."""
    ops = []
    tags = cl.QueryTags(constants.TAG_CLUSTER, "")
    if tags:
        log("cluster tags: %s" % " ".join(tags))
        ops.append(opcodes.OpTagsDel(kind=constants.TAG_CLUSTER, name="", tags=list(tags)))
    for kind, query in ((constants.TAG_NODEGROUP, cl.QueryGroups),
                        (constants.TAG_NODE, cl.QueryNodes)):
        for name, tags in query([], ["name", "tags"], False):
            if tags:
                log("%s %s tags: %s" % (kind, name, " ".join(tags)))
                ops.append(opcodes.OpTagsDel(kind=kind, name=name, tags=list(tags)))
    return ops


def main():
    cl = cli.GetClient()

    # Jobs: cancel what has not started, wait for what has.
    unfinished = []
    for job, status in cl.QueryJobs(None, ["id", "status"]):
        if status in ("queued", "waiting"):
            log("cancelling job %s (%s)" % (job, status))
            try:
                cl.CancelJob(job)
            except Exception:  # it may have started meanwhile: waited for below
                pass
        if status not in FINISHED:
            unfinished.append(job)
    if unfinished:
        log("waiting for jobs: %s" % " ".join(map(str, unfinished)))
        wait(cl, unfinished)

    # Every change below as its own job, all submitted at once: Ganeti starts a process for
    # each job (about a second), so jobs side by side cost one such start, not one each.
    jobs = []

    def submit(ops, what):
        jobs.append((cl.SubmitJob(ops), what))

    if cl.QueryClusterInfo().get("max_running_jobs") != 20:
        log("max running jobs back to 20")
        submit([opcodes.OpClusterSetParams(max_running_jobs=20)], "max running jobs")

    # Nodes online and not drained (master candidates after, below: not before they are
    # online).
    for name, offline, drained in cl.QueryNodes([], ["name", "offline", "drained"], False):
        if offline or drained:
            log("node %s: offline no, drained no" % name)
            submit([opcodes.OpNodeSetParams(node_name=name, offline=False, drained=False,
                                            force=True)], "node %s" % name)

    # Instances, in one job: removals of instances on the same nodes wait for each other's
    # node locks anyway, and one job starts one process.
    names = [row[0] for row in cl.QueryInstances([], ["name"], False)]
    if names:
        log("removing %d instance(s)" % len(names))
        submit([opcodes.OpInstanceRemove(instance_name=name, ignore_failures=True,
                                         shutdown_timeout=0) for name in names],
               "instance removal")

    ops = tag_removals(cl)
    if ops:
        submit(ops, "tag removal")

    statuses = wait(cl, [job for job, _ in jobs])
    failed = ["%s (job %s: %s)" % (what, job, status)
              for (job, what), status in zip(jobs, statuses) if status != "success"]
    # A tag removed between the query and the job (a watcher of the scenario before, still
    # ending) fails the whole OpTagsDel: ask again what is left, and remove that.
    for _ in range(5):
        if failed != [f for f in failed if f.startswith("tag removal")] or not failed:
            break
        log("%s; the tags again" % ", ".join(failed))
        failed = []
        ops = tag_removals(cl)
        if ops:
            job = cl.SubmitJob(ops)
            (status,) = wait(cl, [job])
            if status != "success":
                failed = ["tag removal (job %s: %s)" % (job, status)]
    if failed:
        raise SystemExit("reset failed: " + ", ".join(failed))

    for name, candidate in cl.QueryNodes([], ["name", "master_candidate"], False):
        if not candidate:
            log("node %s: master candidate yes" % name)
            run(cl, [opcodes.OpNodeSetParams(node_name=name, master_candidate=True,
                                             force=True)], "node %s" % name)

    # Finished jobs archived, one by one.
    for job, status, start in cl.QueryJobs(None, ["id", "status", "start_ts"]):
        if status in FINISHED and start is not None:
            try:
                cl.ArchiveJob(job)
            except Exception as e:  # listed on, as before
                log("job %s not archived: %s" % (job, e))

    for row in cl.QueryNodes([], ["name", "offline", "drained", "role"], False):
        sys.stderr.write("[testbed] %s %s %s %s\n" % (
            row[0], "Y" if row[1] else "N", "Y" if row[2] else "N", row[3]))


if __name__ == "__main__":
    main()

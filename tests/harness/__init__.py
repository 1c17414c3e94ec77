"""The host side of the VM tests, the demo and the benchmark, one concern a
module:

    paths      where the tree and its build are
    kernels    the test kernels and guest images, and how a report names them
    job        the job tar that goes into the guest, the results that come back
    console    kernel reports on the console, the taint, the Guest* errors
    qemu       booting a guest: QEMU's arguments, the run's deadline
    parsers    what the guest writes: probe samples, storm times, counters
    stats      percentiles, medians, latency over a window
    elfcore    an independent reader of ELF core files
    scenarios  what crashes in a storm, and how (data)
    setups     what a storm runs against: kernels, sysctls, agent configs (data)
    storms     running a storm and what it did
    crashtime  crash-to-exit times with every knob at its default
    report     markdown tables, plots, JSON
    figures    the benchmark's figures, tables and goals
    apache     the Apache storm in the Debian guest: its readers, and the
               benchmark's setups, job, figures and tables

The guest's side is shell, in tests/guest/*.sh.
"""

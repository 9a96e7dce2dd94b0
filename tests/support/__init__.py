"""Helpers every part of the suite shares, written once: starting a ladder's dispatch
(``tests.support.ladders``), running work in threads against the database
(``tests.support.threads``) and real processes on the test database, watched as they run
(``tests.support.processes``). The standard ladder body itself is ``ladders.bodies.ladder_body``,
which the benchmarks and the scale run build theirs from too."""

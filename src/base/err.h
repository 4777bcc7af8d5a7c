/* err.h - apiparity's own error numbers, and the one table of exit codes.
 *
 * Library code returns 0 or a negative number: -errno for system failures, or
 * -AP_E* below for failures that errno cannot name. Only src/cmd/ turns one into
 * a message and an exit code, once, through ap_exit_code().
 */
#ifndef AP_ERR_H
#define AP_ERR_H

enum ap_err {
	AP_EBASE = 10000,
	AP_ECONFIG,       /* malformed environments or spec file */
	AP_EUNKNOWN_ENV,  /* no environment of that name */
	AP_EUNREACHABLE,  /* exec prefix or chroot could not be started */
	AP_ENOPYTHON,     /* the environment has no such python */
	AP_ETORCH,        /* torch failed to import */
	AP_EWORKER,       /* worker died, or broke the protocol */
	AP_ETIMEOUT,      /* worker stopped answering */
	AP_EPROTO,        /* a malformed or truncated frame */
	AP_ETOOBIG,       /* a frame over the size limit */
	AP_EPROVISION,    /* debootstrap or apt-get failed */
	AP_ENOSOURCE,     /* no upstream test source for this version */
	AP_ENOTREG,       /* an input that is not a regular file */
	AP_EUNVERIFIED,   /* no environment could check the target */
	AP_EINPUT,        /* an input file (a matrix, a sweep.json) that is not one */
	AP_EMAX
};

/* Exit codes of the apiparity command; documented in --help and the man page. */
enum ap_exit {
	AP_EXIT_OK = 0,
	AP_EXIT_FAILED = 1,      /* a check found an inconsistency */
	AP_EXIT_USAGE = 2,       /* bad command line */
	AP_EXIT_UNREACHABLE = 3, /* exec prefix or chroot failed */
	AP_EXIT_CONFIG = 4,      /* malformed input (environments, spec, policy, matrix ...) */
	AP_EXIT_UNKNOWN_ENV = 5,
	AP_EXIT_NOPYTHON = 6,
	AP_EXIT_TORCH = 7,       /* torch failed to import */
	AP_EXIT_WORKER = 8,      /* worker died or broke the protocol */
	AP_EXIT_TIMEOUT = 9,     /* worker stopped answering */
	AP_EXIT_IO = 10,         /* could not write results (disk full, ...) */
	AP_EXIT_PROVISION = 11,  /* env create or tests fetch failed */
	AP_EXIT_NOSOURCE = 12,   /* no upstream test source for the version */
	AP_EXIT_UNVERIFIED = 13, /* nothing verified: no environment could check the target */
};

/* A short description of err (negative or positive); never NULL. */
const char *ap_strerror(int err);

/* The exit code that err (negative) leads to. */
int ap_exit_code(int err);

/* What exit code means, in one line (the --help table, which the man page and
 * the README must match: tests/integration/t-layout.sh); NULL if unused. */
const char *ap_exit_text(int code);

/* The highest exit code in use; codes 0..ap_exit_max() are all described. */
int ap_exit_max(void);

#endif

#ifndef STREAKD_BUILD_INFO_H
#define STREAKD_BUILD_INFO_H

/// The commit streakd was built from (`git describe`), as the build was told in the environment
/// variable STREAKD_COMMIT (the Makefile sets it); empty when it was not.
const char *streakd_commit(void);

#endif

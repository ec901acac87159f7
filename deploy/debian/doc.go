// Package debian holds the Debian package's definition (nfpm.yaml and the
// maintainer scripts postinst, prerm and postrm) and the test that builds
// the package with scripts/package.sh, installs it with dpkg into a scratch
// root, runs what it installed, and removes and purges it. It has no code:
// the files are the package, the test is its specification.
package debian

// Package runinfo is what the plugin reads about runs and shows, in the same
// words wherever it shows them: the order runs are listed in, the Events of
// a run and its Pod, and a workspace binding as -w spells it. kubectl task's
// commands and its dashboard both use it, so that a run reads the same in a
// terminal and in a browser.
package runinfo

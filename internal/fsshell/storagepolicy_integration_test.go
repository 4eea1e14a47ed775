package fsshell

import (
	"strings"
	"testing"
)

// -storagepolicies against a real service, in "hdfs storagepolicies"'s
// words and exit statuses: a policy set on a directory is what a file
// created under it reports; unset, the default's; a storage class on a
// bucket without classes, an unknown policy, a missing path and a missing
// argument are refused.
func TestStoragePolicies(t *testing.T) {
	e := newEnv(t)
	e.ok("-mkdir", "-p", "/sp/hot")
	e.expect(0, lines("Set storage policy HOT on /sp/hot"), "",
		"-storagepolicies", "-setStoragePolicy", "-path", "/sp/hot", "-policy", "HOT")
	e.ok("-touchz", "/sp/hot/f")
	hot := "StoragePolicy{HOT:1, blocks pinned in the workers' caches, loaded on write, never evicted}"
	e.expect(0, lines("The storage policy of /sp/hot/f:", hot), "",
		"-storagepolicies", "-getStoragePolicy", "-path", "/sp/hot/f")
	e.expect(0, lines("Unset storage policy from /sp/hot"), "",
		"-storagepolicies", "-unsetStoragePolicy", "-path", "/sp/hot")
	e.expect(0, lines("The storage policy of /sp/hot/f:",
		"StoragePolicy{WARM:2, blocks cached as they are written and read, evicted least recently used first (the default)}"), "",
		"-storagepolicies", "-getStoragePolicy", "-path", "/sp/hot/f")
	e.expect(2, "", lines("File/Directory does not exist: /sp/none"),
		"-storagepolicies", "-getStoragePolicy", "-path", "/sp/none")
	e.expect(1, "", lines("Please specify the policy name.", "Usage: [-setStoragePolicy -path <path> -policy <policy>]"),
		"-storagepolicies", "-setStoragePolicy", "-path", "/sp/hot")
	r := e.as(e.super).run("-storagepolicies", "-listPolicies")
	if r.code != 0 || !strings.HasPrefix(r.out, "Block Storage Policies:\n\t"+hot+"\n") {
		t.Errorf("-listPolicies: exit %d\n%s", r.code, r.out)
	}
	r = e.as(e.super).run("-storagepolicies", "-setStoragePolicy", "-path", "/sp/hot", "-policy", "IA")
	if r.code != 2 || r.err == "" {
		t.Errorf("IA on a file:// bucket: exit %d, stderr %q; want 2 and why", r.code, r.err)
	}
	r = e.as(e.super).run("-storagepolicies", "-setStoragePolicy", "-path", "/sp/hot", "-policy", "LUKEWARM")
	if r.code != 2 || r.err == "" {
		t.Errorf("an unknown policy: exit %d, stderr %q; want 2 and why", r.code, r.err)
	}
}

//! FenceAgentsRemediation (filled in below).

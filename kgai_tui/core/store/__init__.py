"""A store on disk: shards, scanning, fingerprints, discovery, config and scaffold."""

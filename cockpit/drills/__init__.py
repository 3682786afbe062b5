"""Drills: practise on recorded incidents and get a scorecard.

A drill is an evidence bundle (:mod:`cockpit.sources.bundle`) with an answer key
(:mod:`cockpit.drills.key`); the catalogue (:mod:`cockpit.drills.catalogue`) lists those
shipped in the package.
"""

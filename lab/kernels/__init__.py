"""Layer 1, the kernel side: the manifest (`manifest`), the problem shape (`shape`), builds
(`build`), the callable (`attention`), the public face (`variants`), knock-out switches
(`switches`). Imports nothing else of `lab`."""

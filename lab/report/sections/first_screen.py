def section_first_screen(ctx):
    return []
